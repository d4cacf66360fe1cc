import type { Logger } from 'pino';

import { realClock, type Clock } from '../clock.ts';
import { errorMessage } from '../errors.ts';
import { microTime } from '../leader/micro-time.ts';
import type { KubeClient } from './kube-client.ts';

/** The object an Event is about. */
export interface EventSubject {
  apiVersion: string;
  kind: string;
  name: string;
  /** Absent for cluster-scoped objects; their Events go to `default`, as kubectl looks for them there. */
  namespace?: string;
  uid?: string;
}

export interface EventRecorderOptions {
  client: Pick<KubeClient, 'request'>;
  /** `reportingController`, e.g. `cellfed.io/rebalance-controller`. */
  controller: string;
  /** `reportingInstance`: which process (pod name). */
  instance: string;
  logger: Logger;
  clock?: Clock;
  /** The same Event (subject, reason, note) is not sent again within this long. Default 5 min. */
  dedupeMs?: number;
}

/**
 * Writes events.k8s.io/v1 Events, so `kubectl describe` and `kubectl events` show why a controller did or
 * did not act. Recording never throws and never blocks a reconcile on the apiserver: a failure is logged.
 */
export class EventRecorder {
  private readonly options: EventRecorderOptions;
  private readonly clock: Clock;
  private readonly sent = new Map<string, number>();
  private sequence = 0;

  constructor(options: EventRecorderOptions) {
    this.options = options;
    this.clock = options.clock ?? realClock;
  }

  async record(
    subject: EventSubject,
    type: 'Normal' | 'Warning',
    reason: string,
    note: string,
  ): Promise<void> {
    const now = this.clock.now();
    const id = `${subject.kind}/${subject.namespace ?? ''}/${subject.name}/${reason}/${note}`;
    const last = this.sent.get(id);
    if (last !== undefined && now - last < (this.options.dedupeMs ?? 300_000)) return;
    this.sent.set(id, now);
    if (this.sent.size > 10_000) this.sent.delete(this.sent.keys().next().value!);
    try {
      await this.write(subject, type, reason, note);
    } catch (error) {
      this.sent.delete(id);
      this.options.logger.warn({ err: errorMessage(error), reason, object: id }, 'could not record an Event');
    }
  }

  /**
   * Writes one Event and throws when the apiserver refuses it: for an Event that is a record another
   * component reads (see objects/orphaned-owners.ts), not only a note for people.
   */
  async write(
    subject: EventSubject,
    type: 'Normal' | 'Warning',
    reason: string,
    note: string,
  ): Promise<void> {
    const now = this.clock.now();
    const namespace = subject.namespace ?? 'default';
    await this.options.client.request('POST', `/apis/events.k8s.io/v1/namespaces/${namespace}/events`, {
      body: {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: this.eventName(subject.name, now), namespace },
        eventTime: microTime(now),
        reportingController: this.options.controller,
        reportingInstance: this.options.instance,
        action: reason,
        reason,
        // The API limits a note to 1 kB.
        note: note.length > 1024 ? `${note.slice(0, 1021)}...` : note,
        type,
        regarding: {
          apiVersion: subject.apiVersion,
          kind: subject.kind,
          name: subject.name,
          ...(subject.namespace ? { namespace: subject.namespace } : {}),
          ...(subject.uid ? { uid: subject.uid } : {}),
        },
      },
    });
  }

  /**
   * client-go's naming: the subject's name and the time in nanoseconds, in hex. BigInt, because
   * milliseconds × 10⁶ is past 2^53 and a Number would round neighbouring Events to one name.
   */
  private eventName(subject: string, now: number): string {
    const stamp = (BigInt(now) * 1_000_000n + BigInt(this.sequence++ % 1_000_000)).toString(16);
    return `${subject.slice(0, 200)}.${stamp}`;
  }
}

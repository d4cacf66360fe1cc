export interface FairQueueOptions {
  /** Tasks run at once, for every key together. */
  readonly concurrency: number;
  /** Tasks one key may have waiting; past it {@link FairQueue.run} refuses (the caller answers 429). */
  readonly maxWaitingPerKey: number;
}

interface Waiting {
  readonly start: () => void;
}

/**
 * Runs tasks at most `concurrency` at a time, taking the waiting ones key by key in turn (round robin), as
 * kube-apiserver's flow control shares a priority level's seats among flows: however many tasks one key
 * queues, another key's task starts within one turn of each key with something waiting. A key waits for at
 * most `maxWaitingPerKey` tasks, so neither memory nor any key's wait grows without bound. Memory is bounded
 * by the keys with something waiting: an entry goes with its last task.
 */
export class FairQueue {
  private readonly options: FairQueueOptions;
  private running = 0;
  /** Keys with tasks waiting, in the order their turns come (a Map keeps insertion order). */
  private readonly waiting = new Map<string, Waiting[]>();

  constructor(options: FairQueueOptions) {
    this.options = options;
  }

  /** Runs `task` in `key`'s turn; undefined (not run) when `key` has as many waiting as it may. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> | undefined {
    if (this.running < this.options.concurrency && this.waiting.size === 0) return this.start(task);
    const queue = this.waiting.get(key) ?? [];
    if (queue.length >= this.options.maxWaitingPerKey) return undefined;
    return new Promise<T>((resolve, reject) => {
      queue.push({ start: () => void this.start(task).then(resolve, reject) });
      this.waiting.set(key, queue);
      this.next();
    });
  }

  /** Tasks running now. */
  get inFlight(): number {
    return this.running;
  }

  /** Keys with tasks waiting now. */
  get waitingKeys(): number {
    return this.waiting.size;
  }

  private start<T>(task: () => Promise<T>): Promise<T> {
    this.running++;
    return task().finally(() => {
      this.running--;
      this.next();
    });
  }

  /** Starts waiting tasks while there is room: the first key's first task, and that key goes last. */
  private next(): void {
    while (this.running < this.options.concurrency) {
      const first = this.waiting.entries().next();
      if (first.done) return;
      const [key, queue] = first.value;
      const task = queue.shift()!;
      this.waiting.delete(key);
      if (queue.length > 0) this.waiting.set(key, queue);
      task.start();
    }
  }
}

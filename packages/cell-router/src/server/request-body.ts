import { tooManyRefusal } from '../auth/admission.ts';
import type { Authorize } from '../auth/request-authorization.ts';
import { refusal, type Refusal } from '../routing/destination.ts';
import { requestEntityTooLarge } from '../status/kube-status.ts';
import type { BodyBudget } from './body-budget.ts';
import type { ClientRequest } from './client-request.ts';

/** How the router holds request bodies (one per router; see {@link RequestBody}). */
export interface BodyHolding {
  readonly budget?: BodyBudget | undefined;
  /**
   * Bytes of a body read before the caller must be known to be allowed its request: small writes (nearly
   * all) cost no review; a larger body is read on only for a caller the control plane allows the request.
   */
  readonly unauthorizedBytes: number;
}

/**
 * One request's body, read whole for the stages that must see it (a name, a version, the marks), held to
 * the router's {@link BodyBudget} under the caller's keys, and given back when the request ends. Past
 * {@link BodyHolding.unauthorizedBytes} (by its Content-Length, or as it arrives) nothing more is read
 * until the caller is authorized for the request, as kube-apiserver authorizes before it reads a body: a
 * caller without the right gets its 403 having cost the router at most that many bytes.
 */
export class RequestBody {
  private readonly request: ClientRequest;
  private readonly holding: BodyHolding;
  private readonly keys: readonly string[];
  private readonly authorize: Authorize;
  private taken = 0;

  constructor(request: ClientRequest, holding: BodyHolding, keys: readonly string[], authorize: Authorize) {
    this.request = request;
    this.holding = holding;
    this.keys = keys;
    this.authorize = authorize;
  }

  /**
   * The body, up to `limit` bytes (413 past it, kube-apiserver's 3 MiB cap), or the refusal that answers the
   * request instead: 403 for a caller not allowed a large body, 429 when the budget is spent. Whatever was
   * not read is read and dropped, so the refusal reaches the caller (a reset connection would lose it).
   */
  async read(limit: number): Promise<Buffer | Refusal> {
    const { request } = this;
    const declared = Number(request.headers['content-length']);
    const tooLarge = () => refusal(requestEntityTooLarge(limit), 'too-large');
    if (declared > limit) return this.drop(tooLarge());
    let allowed = false;
    const allow = async (): Promise<Refusal | undefined> => {
      if (allowed) return undefined;
      const denied = await this.authorize();
      allowed = denied === undefined;
      return denied;
    };
    if (declared > this.holding.unauthorizedBytes) {
      const denied = await allow();
      if (denied) return this.drop(denied);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused: Refusal | undefined;
    for await (const chunk of request.iterator({ destroyOnReturn: false })) {
      const bytes = chunk as Buffer;
      size += bytes.length;
      if (size > limit) refused = tooLarge();
      else if (size > this.holding.unauthorizedBytes) refused = await allow();
      if (!refused && !this.hold(bytes.length)) refused = tooManyRefusal('body-budget');
      if (refused) break;
      chunks.push(bytes);
    }
    // After the loop: leaving it pauses the request.
    if (refused) return this.drop(refused);
    return Buffer.concat(chunks);
  }

  /** Gives back what the body held: when the request has been answered. */
  release(): void {
    if (this.taken > 0) this.holding.budget?.give(this.keys, this.taken);
    this.taken = 0;
  }

  private hold(bytes: number): boolean {
    const { budget } = this.holding;
    if (!budget) return true;
    if (!budget.take(this.keys, bytes)) return false;
    this.taken += bytes;
    return true;
  }

  private drop(answer: Refusal): Refusal {
    this.request.resume();
    this.release();
    return answer;
  }
}

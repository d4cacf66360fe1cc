import { outcomeOf, type Refusal } from '../routing/destination.ts';
import { sendStatus } from './forward.ts';
import { type ClientResponse } from '../server/client-request.ts';
import { type RequestOutcome } from '../server/request-outcome.ts';

/**
 * Asked of a cell for an answer the router shows in its client view (it reads the object): uncompressed, as
 * the router would only have to inflate it.
 */
export const SHOWN_ANSWER = { 'accept-encoding': 'identity' };

/** Answers with a refusal's Status (and headers); what the request's outcome records. */
export function sendRefusal(response: ClientResponse, destination: Refusal): RequestOutcome {
  sendStatus(response, destination.status, destination.headers);
  return outcomeOf(destination, destination.status.code);
}

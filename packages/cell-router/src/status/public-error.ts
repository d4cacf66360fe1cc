import { ApiError, ControllerKitError, ControllerKitErrorCode, errorMessage } from '@cellfed/controller-kit';

/**
 * What a caller is told of an error the router met on a request of its own (to a cell or the control plane):
 * what failed, never where. A transport error says where it went (a URL, an IP and port, a host name in a
 * certificate error) and an apiserver's refusal of the router names the router's identity; both are the
 * router's to log and not its callers' to read.
 */
export function publicErrorMessage(error: unknown): string {
  if (error instanceof ApiError) return `the apiserver answered ${error.statusCode}`;
  if (error instanceof ControllerKitError && error.code === ControllerKitErrorCode.Transport) {
    const code = causeCode(error);
    return code ? `no answer (${code})` : 'no answer';
  }
  return withoutAddresses(errorMessage(error));
}

/** The first system or undici error code in an error's causes (ECONNREFUSED, UND_ERR_SOCKET, …). */
function causeCode(error: unknown): string | undefined {
  for (let at: unknown = error, depth = 0; at && depth < 5; depth++) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && /^(E[A-Z]+|UND_ERR_[A-Z_]+|ERR_[A-Z_]+)$/.test(code)) return code;
    at = (at as { cause?: unknown }).cause;
  }
  return undefined;
}

const ADDRESSES: readonly RegExp[] = [
  // URLs: scheme, host, port, path.
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s"',)]*[^\s"',):.;]/gi,
  // IPv6, bracketed or as Node writes it before a port (fd00::5:6443); IPv4 with or without a port.
  /\[[0-9a-f]*:[0-9a-f:.]*\](?::\d+)?/gi,
  /(?<![\w:])[0-9a-f]*(?::[0-9a-f]*){2,8}(?![\w:])/gi,
  /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b/g,
  // A host name with a port, one label or more; the host a name lookup did not find.
  /\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*:\d{2,5}\b/gi,
  /(?<=\b(?:ENOTFOUND|EAI_AGAIN) )\S+/g,
  // A certificate name check names the host and the certificate's names.
  /(?<=\b(?:Host|IP|DNS): ?)[^\s,.]+(?:\.[^\s,.]+)*\.?/g,
];

/** `text` with every address in it replaced by `<address>`. */
export function withoutAddresses(text: string): string {
  return ADDRESSES.reduce((redacted, pattern) => redacted.replace(pattern, '<address>'), text);
}

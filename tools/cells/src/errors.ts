import { CodedError } from '@cellfed/controller-kit/errors';

/** Stable codes for everything the cells tooling can fail with; the CLI prints `code: message`. */
export const E2eErrorCode = {
  /** A required binary (etcd, kube-apiserver, …) is not in the tools directory. */
  ToolsMissing: 'CELLFED_E2E_TOOLS_MISSING',
  /** A child process exited while it should have been running. */
  ProcessExited: 'CELLFED_E2E_PROCESS_EXITED',
  /** An apiserver or etcd did not become ready in time. */
  NotReady: 'CELLFED_E2E_NOT_READY',
  /** openssl failed while creating certificates. */
  Pki: 'CELLFED_E2E_PKI',
  /** env.json or the provider's state file is missing or malformed. */
  InvalidEnvironment: 'CELLFED_E2E_INVALID_ENVIRONMENT',
  /** The command line could not be parsed. */
  InvalidArguments: 'CELLFED_E2E_INVALID_ARGUMENTS',
  /** The provider cannot run on this machine (kind without a Docker engine). */
  ProviderUnavailable: 'CELLFED_E2E_PROVIDER_UNAVAILABLE',
  /** An external command (kind, docker, kubectl) failed. */
  CommandFailed: 'CELLFED_E2E_COMMAND_FAILED',
  /** `up` was interrupted (Ctrl-C, SIGTERM); everything it started has been stopped. */
  Interrupted: 'CELLFED_E2E_INTERRUPTED',
} as const;

export type E2eErrorCode = (typeof E2eErrorCode)[keyof typeof E2eErrorCode];

export class E2eError extends CodedError<E2eErrorCode> {
  override readonly name: string = 'E2eError';
}

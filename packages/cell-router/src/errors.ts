import { CodedError } from '@cellfed/controller-kit/errors';

import { cellFailure, type KubeStatus } from './status/kube-status.ts';

/**
 * Stable codes for everything the router fails with. A request's failure reaches its client as a
 * Kubernetes Status (status/kube-status.ts); the code is what the router's own logs carry.
 */
export const RouterErrorCode = {
  /** The command line did not parse; the message lists every problem. */
  InvalidConfig: 'CELLFED_ROUTER_INVALID_CONFIG',
  /** The serving certificate's Secret is missing, unreadable or lacks a key. */
  TlsSecret: 'CELLFED_ROUTER_TLS_SECRET',
  /** A create's body has no name the router can read (answered 400). */
  BodyName: 'CELLFED_ROUTER_BODY_NAME',
  /** A protobuf body is malformed. */
  ProtobufWire: 'CELLFED_ROUTER_PROTOBUF_WIRE',
  /** A write body cannot be given to the cell as it is (answered 400 or 422). */
  CellView: 'CELLFED_ROUTER_CELL_VIEW',
  /** A composite resourceVersion or continue token this router did not issue (answered 400). */
  CellToken: 'CELLFED_ROUTER_CELL_TOKEN',
  /** A cell answered a page of a merged list with an error (its Status goes to the client). */
  CellList: 'CELLFED_ROUTER_CELL_LIST',
  /** A cell the request needs has no client (not engaged yet, or it left). */
  CellNotConnected: 'CELLFED_ROUTER_CELL_NOT_CONNECTED',
} as const;

export type RouterErrorCode = (typeof RouterErrorCode)[keyof typeof RouterErrorCode];

export class RouterError extends CodedError<RouterErrorCode> {
  override readonly name: string = 'RouterError';
}

/** A body the router cannot read a name from: answered 400 with this reason. */
export class BodyNameError extends RouterError {
  override readonly name: string = 'BodyNameError';

  constructor(message: string) {
    super(RouterErrorCode.BodyName, message);
  }
}

/** A malformed protobuf body. */
export class ProtobufWireError extends RouterError {
  override readonly name: string = 'ProtobufWireError';

  constructor(message: string) {
    super(RouterErrorCode.ProtobufWire, message);
  }
}

/** A body the cell cannot be given as it is: answered 400 or 422 with this message. */
export class CellViewError extends RouterError {
  override readonly name: string = 'CellViewError';

  constructor(message: string) {
    super(RouterErrorCode.CellView, message);
  }
}

/** A composite resourceVersion or continue token that does not decode: answered 400 (or 410 if expired). */
export class CellTokenError extends RouterError {
  override readonly name: string = 'CellTokenError';

  constructor(message: string, code: RouterErrorCode = RouterErrorCode.CellToken) {
    super(code, message);
  }
}

/** A cell answered a page with an error: its Status is what the client gets (naming the cell). */
export class CellListError extends RouterError {
  override readonly name: string = 'CellListError';
  readonly status: KubeStatus;

  constructor(cell: string, code: number, text: string) {
    const status = cellFailure(cell, code, text);
    super(RouterErrorCode.CellList, status.message);
    this.status = status;
  }
}

/** How a request ended: what the access log, the metrics and the span record. */
export interface RequestOutcome {
  code: number;
  /** The cell that answered, `control-plane`, `all-cells`, or empty when the router answered itself. */
  cell: string;
  route: string;
  routeCase?: number;
  fenced?: boolean;
  /** The object's name when the path does not give it (a create names it in its body). */
  name?: string;
}

/** Which cells hold every shared object as the control plane has it, since they were last engaged. */
export class MirrorState {
  private readonly mirrored = new Set<string>();
  private readonly problems = new Map<string, string>();

  isMirrored(cell: string): boolean {
    return this.mirrored.has(cell);
  }

  /** Why the last pass over a cell failed, if it did: the CellSet's Blocked condition says it. */
  problem(cell: string): string | undefined {
    return this.problems.get(cell);
  }

  set(cell: string, mirrored: boolean): void {
    if (mirrored) this.mirrored.add(cell);
    else this.mirrored.delete(cell);
    if (mirrored) this.problems.delete(cell);
  }

  failed(cell: string, problem: string): void {
    this.problems.set(cell, problem);
  }
}

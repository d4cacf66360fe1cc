import { safeParseCellSet, type CellSet } from '@cellfed/api';

/**
 * The CellSet as read from the control plane: validated once per stored version, the last valid one kept.
 * The router and both controllers read it from their CellPool instead of parsing the object each time.
 */
export interface CellSetReading {
  /** The CellSet as stored now, unparsed; undefined when there is none. */
  readonly object: unknown;
  /** The stored CellSet when it is valid; undefined when it is invalid or absent. */
  readonly current: CellSet | undefined;
  /**
   * The last valid CellSet read: the stored one, or the one before an invalid edit or a deletion, which
   * must not tear down what runs. Undefined until a valid one has been read.
   */
  readonly lastGood: CellSet | undefined;
  /** Why the stored CellSet is not `current`: absent or invalid, with each issue. '' when it is. */
  readonly problem: string;
}

interface Stored {
  metadata?: { resourceVersion?: string; uid?: string };
}

/** Reads CellSet objects into {@link CellSetReading}s, parsing each stored version once. */
export class CellSetReader {
  private reading: CellSetReading = {
    object: undefined,
    current: undefined,
    lastGood: undefined,
    problem: 'no CellSet has been read yet',
  };
  private version: string | undefined;

  read(object: unknown): CellSetReading {
    if (object === undefined) {
      this.version = undefined;
      this.reading = { ...this.reading, object, current: undefined, problem: 'the CellSet does not exist' };
      return this.reading;
    }
    const meta = (object as Stored).metadata;
    // A stored version is immutable: the same uid and resourceVersion parse the same.
    const version = meta?.resourceVersion ? `${meta.uid ?? ''}/${meta.resourceVersion}` : undefined;
    if (version !== undefined && version === this.version) return this.reading;
    this.version = version;
    const parsed = safeParseCellSet(object);
    this.reading = parsed.success
      ? { object, current: parsed.data, lastGood: parsed.data, problem: '' }
      : {
          object,
          current: undefined,
          lastGood: this.reading.lastGood,
          problem: `the CellSet is invalid: ${parsed.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`,
        };
    return this.reading;
  }
}

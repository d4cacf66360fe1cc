import { CellBackupSchema } from '../cell-backup.ts';
import { safeParseCellSet } from '../cell-set.ts';

import { CELL_BACKUP_EXAMPLES, CELLSET_EXAMPLES } from './crd-examples.ts';

// The same examples go to a real apiserver in the e2e suite (e2e/test/suites/controller-kit.e2e.spec.ts), which
// proves the CRDs judge them the same way.
describe('CRD examples against the zod schemas', () => {
  it.each(CELLSET_EXAMPLES.map((example) => [example.name, example] as const))(
    'CellSet: %s',
    (_name, example) => {
      expect(safeParseCellSet(example.object).success).toBe(example.valid);
    },
  );

  it.each(CELL_BACKUP_EXAMPLES.map((example) => [example.name, example] as const))(
    'CellBackup: %s',
    (_name, example) => {
      expect(CellBackupSchema.safeParse(example.object).success).toBe(example.valid);
    },
  );
});

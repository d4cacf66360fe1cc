import { CellSetReader } from '@cellfed/controller-kit';
import { memoryLogger } from '@cellfed/controller-kit/testing';

import { RoutingStateHolder } from './routing-state-holder.ts';

const cellSet = (generation: number, cells: unknown[]) => ({
  apiVersion: 'cells.cellfed.io/v1alpha1',
  kind: 'CellSet',
  metadata: { name: 'default', uid: 'u1', resourceVersion: String(generation * 10), generation },
  spec: { cells },
});
const cell = (id: string, state = 'Normal') => ({ id, state, kubeconfigSecretRef: { name: id } });

describe('RoutingStateHolder', () => {
  it('is not ready until a valid CellSet is loaded, and says why', () => {
    const holder = new RoutingStateHolder(memoryLogger().logger);
    const reader = new CellSetReader();
    expect(holder.readyCheck()).toBe('no CellSet has been read yet');
    holder.load(reader.read(undefined));
    expect(holder.readyCheck()).toBe('the CellSet does not exist');
    expect(holder.load(reader.read(cellSet(1, [cell('a')])))).toBe(true);
    expect(holder.readyCheck()).toBe(true);
    expect(holder.current()?.generation).toBe(1);
  });

  it('swaps the whole state on a new generation and ignores a repeat', () => {
    const holder = new RoutingStateHolder(memoryLogger().logger);
    const reader = new CellSetReader();
    holder.load(reader.read(cellSet(1, [cell('a')])));
    const first = holder.current();
    expect(holder.load(reader.read(cellSet(1, [cell('a')])))).toBe(false);
    expect(holder.current()).toBe(first);
    expect(holder.load(reader.read(cellSet(2, [cell('a'), cell('b', 'Joining')])))).toBe(true);
    expect(holder.current()).not.toBe(first);
    expect(holder.current()?.table.rebalancing).toBe(true);
  });

  it('keeps the last valid state when the CellSet turns invalid or goes away', () => {
    const { logger, lines } = memoryLogger();
    const holder = new RoutingStateHolder(logger);
    const reader = new CellSetReader();
    holder.load(reader.read(cellSet(1, [cell('a')])));
    const good = holder.current();
    expect(holder.load(reader.read(cellSet(2, [cell('a', 'Joining')])))).toBe(false);
    expect(holder.current()).toBe(good);
    expect(lines.at(-1)).toMatchObject({ msg: 'CellSet not usable; keeping the last routing state' });
    expect(holder.load(reader.read(undefined))).toBe(false);
    expect(holder.current()).toBe(good);
    expect(holder.readyCheck()).toBe(true);
  });
});

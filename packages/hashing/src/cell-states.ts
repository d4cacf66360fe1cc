/**
 * The states of a cell the routing rule knows: `Normal` cells hold their keys; `Joining` (In) cells are
 * being filled; `Draining` (Out) cells are being emptied; `Down` cells have failed and are in neither ring.
 */
export const CELL_STATES = ['Normal', 'Joining', 'Draining', 'Down'] as const;

/** One of {@link CELL_STATES}. */
export type CellState = (typeof CELL_STATES)[number];

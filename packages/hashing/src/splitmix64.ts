/**
 * SplitMix64 (Steele, Lea, Flood 2014; the generator behind Java's SplittableRandom), on 32-bit halves.
 * The ring derives a cell's virtual-node points from it: one seed per cell, as many outputs as points.
 * @internal
 */
import { addHi, addLo, mulHi, mulLo } from './uint64';

const GAMMA_H = 0x9e3779b9;
const GAMMA_L = 0x7f4a7c15;
const M1_H = 0xbf58476d;
const M1_L = 0x1ce4e5b9;
const M2_H = 0x94d049bb;
const M2_L = 0x133111eb;

/**
 * Writes the first `count` outputs of SplitMix64 seeded with (seedHi, seedLo) into hi[at..] and lo[at..].
 * Output n (from 1) is mix(seed + n * 0x9e3779b97f4a7c15), where
 * mix(z) = z3 ^ (z3 >> 31), z3 = (z2 ^ (z2 >> 27)) * 0x94d049bb133111eb, z2 = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9.
 */
export function splitmix64Fill(
  seedHi: number,
  seedLo: number,
  count: number,
  hi: Uint32Array,
  lo: Uint32Array,
  at: number,
): void {
  let sH = seedHi;
  let sL = seedLo;
  for (let n = 0; n < count; n++) {
    const nH = addHi(sH, sL, GAMMA_H, GAMMA_L);
    sL = addLo(sH, sL, GAMMA_H, GAMMA_L);
    sH = nH;
    // z ^= z >> 30
    let zH = (sH ^ (sH >>> 30)) >>> 0;
    let zL = (sL ^ ((sL >>> 30) | (sH << 2))) >>> 0;
    let mH = mulHi(zH, zL, M1_H, M1_L);
    let mL = mulLo(zH, zL, M1_H, M1_L);
    // z ^= z >> 27
    zH = (mH ^ (mH >>> 27)) >>> 0;
    zL = (mL ^ ((mL >>> 27) | (mH << 5))) >>> 0;
    mH = mulHi(zH, zL, M2_H, M2_L);
    mL = mulLo(zH, zL, M2_H, M2_L);
    // z ^= z >> 31
    hi[at + n] = (mH ^ (mH >>> 31)) >>> 0;
    lo[at + n] = (mL ^ ((mL >>> 31) | (mH << 1))) >>> 0;
  }
}

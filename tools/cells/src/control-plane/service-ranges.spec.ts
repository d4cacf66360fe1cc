import { CONTROL_PLANE_ID, cellIds } from '../env-file.ts';
import { E2eErrorCode } from '../errors.ts';
import { serviceRangeOf } from './service-ranges.ts';

describe('serviceRangeOf', () => {
  it('gives the control plane kind’s default range and each cell the next /16', () => {
    expect(serviceRangeOf(CONTROL_PLANE_ID)).toEqual({
      cidr: '10.96.0.0/16',
      apiserverServiceIp: '10.96.0.1',
    });
    expect(serviceRangeOf('cell-1')).toEqual({ cidr: '10.97.0.0/16', apiserverServiceIp: '10.97.0.1' });
    expect(serviceRangeOf('cell-147').cidr).toBe('10.243.0.0/16');
  });

  it('never gives two apiservers of an environment the same range', () => {
    const cidrs = [CONTROL_PLANE_ID, ...cellIds(147)].map((id) => serviceRangeOf(id).cidr);
    expect(new Set(cidrs).size).toBe(cidrs.length);
    expect(cidrs).not.toContain('10.244.0.0/16');
  });

  it.each(['cell-0', 'cell-148', 'cell-01', 'east', 'cell-1x'])('refuses %s with a readable error', (id) => {
    expect(() => serviceRangeOf(id)).toThrow(
      expect.objectContaining({ code: E2eErrorCode.InvalidArguments }),
    );
  });
});

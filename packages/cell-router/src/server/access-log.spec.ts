import { parseRequestInfo } from '../request/request-info.ts';
import { accessLogLevel } from './access-log.ts';

const get = parseRequestInfo('GET', '/api/v1/namespaces/shop/configmaps/web');
const watch = parseRequestInfo('GET', '/api/v1/namespaces/shop/configmaps?watch=1');

describe('accessLogLevel', () => {
  it.each([
    ['a quick success', get, 200, 0.002, 'debug'],
    ['a refusal', get, 429, 0.001, 'info'],
    ['a not-found', get, 404, 0.001, 'info'],
    ['a cell error', get, 503, 0.001, 'info'],
    ['no answer at all', get, 0, 0.001, 'info'],
    ['a slow success', get, 200, 1.5, 'info'],
    ['a long watch', watch, 200, 300, 'debug'],
    ['a long exec (upgrade)', get, 101, 300, 'debug'],
    ['a target that does not parse', 'bad target', 400, 0.001, 'info'],
  ] as const)('logs %s at %s', (_what, info, code, seconds, level) => {
    expect(accessLogLevel(info, code, seconds)).toBe(level);
  });
});

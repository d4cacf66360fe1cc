// The measured curves BENCHMARKS.md and docs/scaling.md show, drawn from bench/results (svg-plot.mjs).
// Each plot belongs to the results file whose section shows it; a plot whose figures are missing is not drawn.
import { lineChart } from './svg-plot.mjs';

const MIB = 1024 * 1024;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Router memory against objects in the federation (router-scale.json), with the goal's slope from the smaller size. */
function routerMemory(results) {
  const sizes = results['router-scale.json']?.sizes;
  if (!Array.isArray(sizes) || sizes.length < 2) return undefined;
  const at = (field) => sizes.map((size) => [size.objects, size[field]]);
  const [first, last] = [sizes[0], sizes[sizes.length - 1]];
  const goal = results['router-scale.json'].goals?.routerRssBytesPerObject ?? 16;
  return {
    name: 'router-memory',
    title: 'Router memory against objects in the federation',
    svg: lineChart({
      title: 'Router memory against objects in the federation',
      xLabel: 'ConfigMaps in the federation (3 cells)',
      yLabel: 'MiB',
      series: [
        { name: 'RSS after the work', points: at('routerRssMbAfterWork') },
        { name: 'RSS idle', points: at('routerIdleRssMb') },
        { name: 'V8 heap after a GC', points: at('routerHeapUsedMbAfterWork') },
        {
          name: `RSS at ${goal} B/object`,
          dashed: true,
          points: [
            [first.objects, first.routerRssMbAfterWork],
            [last.objects, first.routerRssMbAfterWork + ((last.objects - first.objects) * goal) / MIB],
          ],
        },
      ],
    }),
  };
}

/**
 * A whole list's seconds against objects, through the router and from one apiserver: at 30k (router-list.json)
 * and at the scale bench's sizes (router-scale.json), each the median of its rounds.
 */
function listTime(results) {
  const list = results['router-list.json'];
  const sizes = results['router-scale.json']?.sizes ?? [];
  if (!list?.seconds?.router || sizes.length === 0) return undefined;
  const routed = [
    [list.objects, median(list.seconds.router)],
    // Warm lists where the bench ran them (the median of its rounds), else its first.
    ...sizes.map((size) => [size.objects, size.warmListSeconds ?? size.listSeconds]),
  ];
  const direct = [
    [list.objects, median(list.seconds.direct)],
    ...sizes
      .filter((size) => size.directListSeconds !== undefined)
      .map((size) => [size.objects, size.directListSeconds]),
  ];
  return {
    name: 'list-time',
    title: 'Whole list time against objects',
    svg: lineChart({
      title: 'A whole list of one namespace (JSON) against objects',
      xLabel: 'ConfigMaps listed (over 3 cells through the router)',
      yLabel: 'seconds',
      series: [
        { name: 'through the router', points: routed },
        { name: 'one apiserver', points: direct },
      ],
    }),
  };
}

/**
 * CPU per event against client watches (router-watch.json): the router's for ConfigMaps and Pods, the one
 * apiserver's (and its etcd's) serving as many watches itself, and the goal's 3 µs per event per watch.
 */
function watchCpu(results) {
  const phases = results['router-watch.json']?.phases;
  if (!Array.isArray(phases)) return undefined;
  const of = (kind, arm) => phases.filter((phase) => phase.kind === kind && phase.arm === arm);
  const routed = (kind) =>
    of(kind, 'router').map((phase) => [phase.watches, phase.routerCpuUs / phase.events / 1000]);
  const direct = of('configmaps', 'direct').map((phase) => [phase.watches, phase.daemonsUsPerEvent / 1000]);
  const goal = results['router-watch.json'].goals?.routerUsPerEventPerWatch ?? 3;
  const most = Math.max(...phases.map((phase) => phase.watches));
  return {
    name: 'watch-cpu',
    title: 'CPU per event against client watches',
    svg: lineChart({
      title: 'CPU per event against client watches of one resource',
      xLabel: 'client watches (one identity)',
      yLabel: 'CPU ms per event',
      series: [
        { name: 'router, ConfigMaps', points: routed('configmaps') },
        { name: 'router, Pods', points: routed('pods') },
        { name: 'one apiserver + etcd (creates too)', points: direct },
        {
          name: `${goal} µs per watch`,
          dashed: true,
          points: [
            [0, 0],
            [most, (most * goal) / 1000],
          ],
        },
      ],
    }),
  };
}

/** Per results file, the plots its section shows. */
export const PLOTS = {
  'router-scale.json': [routerMemory, listTime],
  'router-watch.json': [watchCpu],
};

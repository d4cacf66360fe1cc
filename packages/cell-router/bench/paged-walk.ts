import { call, type Target } from '@cellfed/bench-kit';

/**
 * Walks the collection at `path` in pages of 500 (limit and continue, as client-go's pager): its items, pages
 * and seconds.
 */
export async function walkPages(
  target: Target,
  path: string,
): Promise<{ items: number; pages: number; seconds: number }> {
  const started = performance.now();
  let token = '';
  let items = 0;
  let pages = 0;
  do {
    const text = await call(
      target,
      'GET',
      `${path}?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
    );
    const page = JSON.parse(text) as { items: unknown[]; metadata: { continue?: string } };
    items += page.items.length;
    pages += 1;
    token = page.metadata.continue ?? '';
  } while (token);
  return { items, pages, seconds: (performance.now() - started) / 1000 };
}

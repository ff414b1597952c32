import type { SourceRef } from '@hashq/jobs';

export interface ListedItem {
  name: string; // relative to the batch base (dir or prefix); exact, any bytes valid in the source
  source: SourceRef; // what a job would hash ({type:'file',path} absolute real path | {type:'s3',bucket,key,versionId?} | {type:'http',url})
  size?: number; // when the listing knows it
  etag?: string; // S3 listing ETag (item is pinned to it)
  expected?: Record<string, string>; // sums mode: algorithm name -> lowercase hex
  line?: number; // manifest / sums line number (1-based)
  error?: { code: 'MANIFEST_LINE_INVALID'; message: string }; // a bad line in a referenced manifest: the item fails, others go on
}
export interface ListPage {
  items: ListedItem[];
  cursor: string | null;
} // cursor null = listing finished
export interface Lister {
  page(cursor: string | null, max: number): Promise<ListPage>;
} // resumable: given the last cursor, never repeats or skips items

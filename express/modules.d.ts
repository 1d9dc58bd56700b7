/** Packages the Express engine uses that ship no types: only the calls we make are declared. */
declare module 'finalhandler' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  interface FinalhandlerOptions { env?: string; onerror?: (err: unknown, req: IncomingMessage, res: ServerResponse) => void }
  export default function finalhandler(req: IncomingMessage, res: ServerResponse, options?: FinalhandlerOptions): (err?: unknown) => void;
}
declare module 'parseurl' {
  import type { IncomingMessage } from 'node:http';
  import type { UrlWithStringQuery } from 'node:url';
  function parseurl(req: IncomingMessage): UrlWithStringQuery | undefined;
  namespace parseurl { function original(req: IncomingMessage): UrlWithStringQuery | undefined }
  export default parseurl;
}
declare module 'etag' {
  export default function etag(entity: string | Buffer, options?: { weak?: boolean }): string;
}
declare module 'path-to-regexp-v0' {
  interface Key { name: string | number; optional: boolean; offset: number }
  function pathToRegexp(path: string | RegExp | Array<string | RegExp>, keys: Key[], options?: { sensitive?: boolean; strict?: boolean; end?: boolean }): RegExp;
  export default pathToRegexp;
}
/** Express 4's body-parser (1.x) and serve-static (1.x), installed under aliases beside the 2.x versions. */
declare module 'body-parser-v1' {
  import bodyParser from 'body-parser';
  export default bodyParser;
}
declare module 'serve-static-v1' {
  import serveStatic from 'serve-static';
  export default serveStatic;
}

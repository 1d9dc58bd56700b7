/** The Vary header (RFC 9110 §12.5.5), shared by both styles of cors. */
import type { ServerResponse } from 'node:http';
import { getCheckedHeader, setCheckedHeader } from '../../lib/http/fixed-headers.js';

/**
 * Add `value` (a field name of keel's own: `Origin`, `Access-Control-Request-Headers`) to the Vary
 * header once, keeping what other middleware put there.
 */
export function appendVary(res: ServerResponse, value: string): void {
  const current = getCheckedHeader(res, 'vary');
  // The common case, nothing there yet: no parsing, and nothing for node's header checks to find (lib/http/fixed-headers.ts).
  if (current === undefined) {
    setCheckedHeader(res, 'Vary', 'vary', value);
    return;
  }
  const text = Array.isArray(current) ? current.join(', ') : String(current);
  const parts = text.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (parts.includes('*') || parts.includes(value.toLowerCase())) return;
  res.setHeader('Vary', text ? `${text}, ${value}` : value);
}

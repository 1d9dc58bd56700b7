/** The Vary header (RFC 9110 §12.5.5), shared by both styles of cors. */
import type { ServerResponse } from 'node:http';

/** Add `value` to the Vary header once, keeping what other middleware put there. */
export function appendVary(res: ServerResponse, value: string): void {
  const current = res.getHeader('Vary');
  // The common case, nothing there yet: no parsing.
  if (current === undefined) {
    res.setHeader('Vary', value);
    return;
  }
  const text = Array.isArray(current) ? current.join(', ') : String(current);
  const parts = text.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (parts.includes('*') || parts.includes(value.toLowerCase())) return;
  res.setHeader('Vary', text ? `${text}, ${value}` : value);
}

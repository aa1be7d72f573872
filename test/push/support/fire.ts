/**
 * A load generator in its own process (so it does not share the server's event loop): POSTs
 * `count` single records at once and prints the statuses as JSON.
 *   node fire.js <url> <token> <count> <prefix>
 */
const [url, token, count, prefix] = process.argv.slice(2) as [string, string, string, string];
const statuses = await Promise.all(Array.from({ length: Number(count) }, async (_, i) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ customer_id: `${prefix}${i}`, signup_date: '2026-11-01T09:30:00Z', affiliate_id: 'aff-1' }),
  });
  await res.arrayBuffer();
  return res.status;
}));
process.stdout.write(JSON.stringify(statuses));

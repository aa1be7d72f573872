import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createRedactor } from '../../src/config/redact.js';
import { batchedLines, createLogger, jsonLogs } from '../../src/log.js';
import { TerminalLines } from '../../src/terminal.js';

const SECRET = 'client-secret-8Kq2';

function capture(): { stream: Writable; text: () => string } {
  let out = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      out += chunk.toString();
      done();
    },
  });
  return { stream, text: () => out };
}

describe('log format', () => {
  it('JSON unless stderr is a terminal; LOG_FORMAT=json or text wins', () => {
    assert.equal(jsonLogs({}, false), true);
    assert.equal(jsonLogs({}, true), false);
    assert.equal(jsonLogs({ LOG_FORMAT: 'json' }, true), true);
    assert.equal(jsonLogs({ LOG_FORMAT: 'JSON' }, true), true);
    assert.equal(jsonLogs({ LOG_FORMAT: 'text' }, false), false);
    assert.equal(jsonLogs({ LOG_FORMAT: 'other' }, true), false);
  });

  it('readable: one line per entry, partner and stream first, details after, secrets redacted', () => {
    const { stream, text } = capture();
    const logger = createLogger({ json: false, stream, redact: createRedactor([SECRET]) });
    logger.warn(`token refused for ${SECRET}:\n  second line`, { partner: 'acme', stream: 'customers', run_id: 'r1', body: { client_secret: SECRET } });
    const lines = text().split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, text());
    assert.match(lines[0] ?? '', /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z warn {2}acme customers: token refused for \*\*\*:; second line {2}\(run_id=r1, body=\{"client_secret":"\*\*\*"\}\)$/);
  });

  it('a line written under a status line erases it, prints whole, and draws the status again', () => {
    const written: string[] = [];
    const terminal = new TerminalLines((t) => written.push(t), () => 20);
    terminal.line('before');
    terminal.showStatus('acme customers: window 1/3 pulled 500');
    terminal.line('a warning');
    terminal.clearStatus();
    terminal.clearStatus();
    assert.deepEqual(written, ['before\n', '\r\x1b[Kacme customers: wi…', '\r\x1b[Ka warning\nacme customers: wi…', '\r\x1b[K']);
  });

  it('batched (a server\'s log): the lines of one turn of the event loop leave in one write, in order, before the next turn ends', async () => {
    const writes: string[] = [];
    const logger = createLogger({ json: true, stream: batchedLines((text) => writes.push(text)) });
    for (let i = 1; i <= 3; i++) logger.info(`request ${i}`);
    // winston hands lines over asynchronously: the turn's writes end up in one call.
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(writes.length, 1);
    assert.deepEqual(writes[0]?.trimEnd().split('\n').map((l) => (JSON.parse(l) as { message: string }).message), ['request 1', 'request 2', 'request 3']);
    logger.warn('later');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(writes.length, 2);
    assert.match(writes[1] ?? '', /"message":"later"/);
  });
});

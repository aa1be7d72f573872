import assert from 'node:assert/strict';
import { createTask } from 'node-cron';
import { DEFINITION_DEFAULTS } from '../../src/config/definition-defaults.js';
import { parseCron } from '../../src/worker/cron.js';

const EXPRESSIONS = [
  '*/5 * * * *', '15 0 * * *', '0 */2 * * *', '30 5 * * 1-5', '0 0 L * *', '0 12 15W * *', '0 0 LW * *',
  '0 0 * * 5L', '0 9 * * 1#2', '0 0 L-2 * *', '*/10 * * * * *', '0 0 * * sun', '0 0 1 jan,jul *', '@daily', '5,35 1-3 * * *',
];

describe('worker cron schedules (UTC)', () => {
  it('next and previous fire times agree with node-cron\'s own matcher', () => {
    for (const expression of EXPRESSIONS) {
      const task = createTask(expression, () => undefined, { timezone: 'Etc/UTC' });
      try {
        const cron = parseCron(expression);
        const step = expression.split(' ').length === 6 ? 1000 : 60_000;
        for (const start of ['2026-01-30T23:59:59.500Z', '2026-02-27T10:07:00.000Z', '2024-02-28T00:00:00.000Z', '2026-12-31T23:55:00.000Z']) {
          const from = new Date(start);
          const next = cron.next(from);
          assert.ok(next > from, `${expression}: next after ${start}`);
          assert.ok(task.match(next), `${expression}: node-cron matches ${next.toISOString()}`);
          // Nothing in between fires (checked on every whole second or minute, for up to 3 days).
          const limit = Math.min(next.getTime(), from.getTime() + 3 * 86_400_000);
          for (let t = Math.ceil((from.getTime() + 1) / step) * step; t < limit; t += step) {
            assert.ok(!task.match(new Date(t)), `${expression}: ${new Date(t).toISOString()} fires before ${next.toISOString()}`);
          }
          const previous = cron.previous(next);
          assert.equal(previous?.toISOString(), next.toISOString(), `${expression}: previous(next) is next`);
          const before = cron.previous(new Date(next.getTime() - 1000));
          assert.ok(before && before < next && task.match(before), `${expression}: previous before ${next.toISOString()}`);
          assert.equal(cron.next(before).toISOString(), next.toISOString(), `${expression}: no fire between ${before.toISOString()} and ${next.toISOString()}`);
        }
      } finally {
        void task.destroy();
      }
    }
  });

  it('a day of the default schedules: 360 delta fires (every 4 minutes), one daily fire at 00:15', () => {
    const delta = parseCron(DEFINITION_DEFAULTS.schedule.customers);
    assert.equal(DEFINITION_DEFAULTS.schedule.transactions, DEFINITION_DEFAULTS.schedule.customers);
    const daily = parseCron(DEFINITION_DEFAULTS.schedule.activity);
    const fires = (cron: typeof delta) => {
      const out: string[] = [];
      for (let t = cron.next(new Date('2026-11-21T23:59:59Z')); t < new Date('2026-11-23T00:00:00Z'); t = cron.next(t)) out.push(t.toISOString());
      return out;
    };
    const day = fires(delta).filter((t) => t.startsWith('2026-11-22'));
    assert.equal(day.length, 360);
    // Never more than 4 minutes between fires, across midnight too: a record waits at most that long for its run.
    const all = fires(delta).map((t) => Date.parse(t));
    assert.ok(all.slice(1).every((t, i) => t - (all[i] as number) === 240_000));
    assert.deepEqual(fires(daily), ['2026-11-22T00:15:00.000Z']);
  });

  it('an invalid expression is an error naming it', () => {
    assert.throws(() => parseCron('61 * * * *'), /not a valid cron expression "61 \* \* \* \*"/);
  });
});

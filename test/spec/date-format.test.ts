import assert from 'node:assert/strict';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { isFullDate } from '../../src/spec/date-format.js';

const ajvDate = (fullFormats.date as { validate: (s: string) => boolean }).validate;

describe('date format', () => {
  const cases = [
    '2024-05-01', '2024-02-29', '2023-02-29', '2000-02-29', '1900-02-29', '2024-04-30', '2024-04-31', '2024-12-31', '2024-13-01',
    '2024-00-10', '2024-01-00', '2024-01-32', '0000-01-01', '9999-12-31', '2024-5-1', '20240501', '2024/05/01', '2024-05-01 ',
    ' 2024-05-01', '2024-05-01\n', '2024-05-01T00:00:00Z', '２０２４-05-01', '2024-0a-01', '', '2024-05-0１',
  ];
  it('accepts and refuses exactly what ajv-formats does', () => {
    for (const value of cases) assert.equal(isFullDate(value), ajvDate(value), value);
  });
  it('accepts real calendar days only', () => {
    assert.equal(isFullDate('2024-02-29'), true);
    assert.equal(isFullDate('2023-02-29'), false);
    assert.equal(isFullDate('2024-04-31'), false);
  });
});

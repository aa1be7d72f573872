/**
 * `partner-sync validate --variant V --entity E FILE [--json]`: checks a partner's sample payload
 * (NDJSON or a JSON array, `-` for stdin) against the spec's schema, the same check every pulled
 * record goes through, and lists every violation by record position.
 */
import { isAbsolute, relative } from 'node:path';
import { openRecordFile, RecordFileError } from '../../../connectors/file/read-records.js';
import type { RecordFile } from '../../../connectors/file/read-records.js';
import { packageRoot } from '../../paths.js';
import { ENTITIES, VARIANTS, isEntity, isVariant } from '../../types.js';
import type { Entity, Variant } from '../../types.js';
import { specValidator } from '../../spec/validator.js';
import type { SpecValidator } from '../../spec/validator.js';
import { RECORD_FIELD } from '../../spec/errors.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../io.js';
import type { Io } from '../io.js';
import { formatTable } from '../table.js';

export interface ValidateOptions {
  variant: string;
  entity: string;
  /** A path, or `-` for stdin. */
  file: string;
  json: boolean;
}

/** One row of the report; `line` is the 1-based record position, 0 for the payload as a whole. */
export interface ValidateError {
  line: number;
  field: string;
  rule: string;
  message: string;
}

export interface ValidateReport {
  total: number;
  valid: number;
  invalid: number;
  errors: ValidateError[];
}

/** Runs the command; resolves to the exit code: 0 all valid, 1 any violation, 2 bad arguments or file. */
export async function validateCommand(opts: ValidateOptions, io: Io, validator?: SpecValidator): Promise<number> {
  if (!isVariant(opts.variant)) {
    io.err(`partner-sync: unknown variant "${opts.variant}" (allowed: ${VARIANTS.join(', ')})`);
    return EXIT_USAGE;
  }
  if (!isEntity(opts.entity)) {
    io.err(`partner-sync: unknown entity "${opts.entity}" (allowed: ${ENTITIES.join(', ')})`);
    return EXIT_USAGE;
  }
  const { variant, entity } = opts;
  const checker = validator ?? specValidator();

  let report: ValidateReport;
  try {
    const file = await openRecordFile(opts.file, io.stdin);
    report = await check(file, checker, variant, entity);
  } catch (error) {
    if (!(error instanceof RecordFileError)) throw error;
    io.err(`partner-sync: ${error.message}`);
    return EXIT_USAGE;
  }

  if (opts.json) {
    io.out(JSON.stringify(report));
  } else {
    const about = `${variant}/${entity}, schema ${displayPath(checker.schemaFile(variant, entity))}`;
    io.out(textReport(report, about));
  }
  return report.errors.length === 0 ? EXIT_OK : EXIT_FAILURE;
}

async function check(file: RecordFile, validator: SpecValidator, variant: Variant, entity: Entity): Promise<ValidateReport> {
  const errors: ValidateError[] = [];
  // A JSON array is a bulk payload and held in memory anyway; NDJSON is not kept.
  const payload: unknown[] | undefined = file.format === 'json-array' ? [] : undefined;
  let total = 0;
  let invalid = 0;
  for await (const record of file.records) {
    total++;
    payload?.push(record.value);
    if (record.parseError !== undefined) {
      invalid++;
      errors.push({ line: record.position, field: RECORD_FIELD, rule: 'json', message: `record is not valid JSON: ${record.parseError}` });
      continue;
    }
    const violations = validator.validate(variant, entity, record.value);
    if (violations.length === 0) continue;
    invalid++;
    for (const v of violations) errors.push({ line: record.position, field: v.field, rule: v.rule, message: v.message });
  }
  if (payload !== undefined) {
    const payloadErrors = validator.validateBulk(payload).map((v) => ({ line: 0, field: v.field, rule: v.rule, message: v.message }));
    errors.unshift(...payloadErrors);
  }
  return { total, valid: total - invalid, invalid, errors };
}

function textReport(report: ValidateReport, about: string): string {
  const records = `${report.total} ${report.total === 1 ? 'record' : 'records'}`;
  if (report.errors.length === 0) return `OK: ${records}, all valid (${about})`;
  const table = formatTable(
    ['LINE', 'FIELD', 'RULE', 'MESSAGE'],
    report.errors.map((e) => [e.line, e.field, e.rule, e.message]),
    Number.MAX_SAFE_INTEGER,
  );
  const payload = report.errors.some((e) => e.line === 0) ? '; the payload as a whole is rejected' : '';
  return `${table}\n${records}: ${report.valid} valid, ${report.invalid} invalid${payload} (${about})`;
}

/** The schema path relative to the package (src/spec/schemas/...) when it lies inside it. */
function displayPath(file: string): string {
  const inside = relative(packageRoot(), file);
  return inside.startsWith('..') || isAbsolute(inside) ? file : inside.split('\\').join('/');
}

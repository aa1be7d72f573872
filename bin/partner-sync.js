#!/usr/bin/env -S node --max-semi-space-size=64
// Thin launcher: the compiled CLI lives in dist/ (built by `npm ci` through the prepare script).
// The flag: a young generation of up to 64 MB a half. A bulk settle allocates per customer and
// transaction; at Node's default (16 MB) its collector took 2.7 s of a month's 14 s settle, and the
// process used 12-13 s of CPU in it against 10 s with this (bench/README.md, the whole pipeline).
// `node bin/partner-sync.js` does not read this line: give the flag there, or NODE_OPTIONS.
import { main } from '../dist/src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));

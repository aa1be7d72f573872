/**
 * The headless Chromium of the browser tests: Debian's package, driven by playwright-core, started
 * with the flags this machine's closed network needs and outside libfaketime (when the suite runs
 * under it, scripts/faketime-suite.sh: Chromium loads no page there; the pages read no time of
 * their own, and the console's session cookie carries Max-Age, counted on the browser's clock).
 */
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** A started browser, or undefined when Chromium is not installed (the caller says it skips). */
export async function launchChromium(): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) return undefined;
  const { chromium } = await import('playwright-core');
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && e[0] !== 'LD_PRELOAD' && !e[0].startsWith('FAKETIME')));
  return chromium.launch({ env, executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
}

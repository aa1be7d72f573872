/**
 * CPU time of a process from Linux /proc, which unlike wall time depends little on what else the
 * machine runs: the benchmarks print it beside their wall-clock figures.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** CPU milliseconds (user + system) of a process, from /proc; undefined once it is gone. 'self-children': this process's reaped children. */
export function procCpuMs(pid: number | 'self-children'): number | undefined {
  try {
    const stat = readFileSync(pid === 'self-children' ? '/proc/self/stat' : `/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14-15 (utime, stime) or 16-17 (cutime, cstime: reaped children), in clock ticks of 10 ms.
    return pid === 'self-children' ? (Number(f[13]) + Number(f[14])) * 10 : (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return undefined;
  }
}

/**
 * CPU milliseconds of a local PostgreSQL server, every process of it: the running ones' own time
 * and the postmaster's reaped children (backends that ended). Undefined when no postgres process
 * is readable here (a remote server).
 */
export function postgresCpuMs(): number | undefined {
  let total = 0;
  let found = false;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    if (!stat.includes('(postgres)')) continue;
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    found = true;
    // Own time (fields 14-15) and reaped children's (16-17, the postmaster's ended backends).
    total += (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10;
  }
  return found ? total : undefined;
}

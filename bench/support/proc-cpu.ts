/**
 * CPU time of a process from Linux /proc, which unlike wall time depends little on what else the
 * machine runs: the benchmarks print it beside their wall-clock figures.
 */
import { readFileSync } from 'node:fs';

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

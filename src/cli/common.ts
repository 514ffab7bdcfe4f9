// Small things every command shares: the error type main.ts turns into one line + exit code,
// stderr notes, the state directory, argument parsers and formatting.
import { InvalidArgumentError } from 'commander';
import { stateDir } from '../daemon/store/paths.js';
import { providerIds } from '../providers/registry.js';

/** An error whose message is shown as one line; `exitCode` defaults to 1. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

export function cliStateDir(): string {
  return stateDir(process.env);
}

/** A note for the human (stderr), so stdout stays clean for `$(…)` and `eval`. */
export function note(line: string): void {
  process.stderr.write(line + '\n');
}

export function out(line = ''): void {
  process.stdout.write(line + '\n');
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** Every provider id, built-in and configured (the CLI loads config.json's providers before building its commands). */
export function providerChoices(): string[] {
  return providerIds();
}

export function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('Must be a port number 0-65535.');
  return n;
}

export function parsePositiveSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('Must be a positive number of seconds.');
  return n;
}

export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n <= 0) throw new InvalidArgumentError('Must be a positive whole number.');
  return n;
}

/** `2026-11-22 09:30Z`, or `-` for none. */
export function shortDate(iso: string | null | undefined): string {
  if (!iso) return '-';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '-';
  return new Date(t).toISOString().slice(0, 16).replace('T', ' ') + 'Z';
}

export function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

/** Rows as aligned columns (the last column is not padded). */
export function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd());
}

/** Quotes a value for POSIX sh: single quotes, with embedded ones closed, escaped and reopened. */
export function shQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

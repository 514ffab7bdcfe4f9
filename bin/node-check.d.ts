// Types for bin/node-check.js (plain JavaScript so that an old Node can run it).
export function parseMinimum(range: string): [number, number, number];
export function requiredRange(): string;
export function satisfies(version: string, range: string): boolean;
export function howToGetNode(cwd?: string): string;
export function nodeVersionProblem(what: string, version?: string, range?: string): string | undefined;

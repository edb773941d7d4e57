/**
 * Reads `# TYPE` lines of a Prometheus text exposition: metric family name to type. Used by the
 * tests that hold the registries to the names and types of spec 02.
 */
export function exposedTypes(exposition: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const line of exposition.split('\n')) {
    if (!line.startsWith('# TYPE ')) continue;
    const [name, type] = line.slice('# TYPE '.length).split(' ');
    if (name !== undefined && type !== undefined) types.set(name, type);
  }
  return types;
}

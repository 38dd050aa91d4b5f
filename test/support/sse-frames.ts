/**
 * Checks the frames of an SSE answer against the frame union the OpenAPI document names for the
 * stream (`x-itemSchema`): each frame's `event:` is one the union maps, and the frame and its data
 * carry the fields their schemas require (through $ref, allOf and a discriminated oneOf). Answers
 * the departures, empty when every frame fits.
 */
export function frameDepartures(doc: any, union: string, text: string): string[] {
  const schemaOf = (ref: string) => doc.components.schemas[ref.split('/').pop()!];
  const requiredOf = (schema: any, value: any): string[] => {
    if (schema.$ref) return requiredOf(schemaOf(schema.$ref), value);
    if (schema.oneOf && schema.discriminator) {
      const target = schema.discriminator.mapping[value?.[schema.discriminator.propertyName]];
      return target ? requiredOf(schemaOf(target), value) : [`${schema.discriminator.propertyName} (unmapped)`];
    }
    return [...(schema.required ?? []), ...(schema.allOf ?? []).flatMap((s: any) => requiredOf(s, value))];
  };
  const frames = text
    .split(/\n\n/)
    .map((block) =>
      Object.fromEntries(block.split('\n').map((line) => [line.split(': ')[0], line.slice(line.indexOf(': ') + 2)])),
    )
    .filter((f) => f.data !== undefined);
  const departures: string[] = [];
  for (const f of frames) {
    const target = schemaOf(`#/components/schemas/${union}`).discriminator.mapping[f.event];
    if (!target) {
      departures.push(`event ${f.event} is not in ${union}`);
      continue;
    }
    const frame = { event: f.event, data: JSON.parse(f.data), ...(f.id === undefined ? {} : { id: Number(f.id) }) };
    const schema = schemaOf(target);
    for (const key of requiredOf(schema, frame)) if (!(key in frame)) departures.push(`${f.event} frame: no ${key}`);
    for (const key of requiredOf(schema.properties.data, frame.data))
      if (!(key in frame.data)) departures.push(`${f.event} frame: data has no ${key}`);
  }
  if (frames.length === 0) departures.push('no frames');
  return departures;
}

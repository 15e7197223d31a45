// What the page reads of the inspector module's JSON form (`json()`, the
// text `kiln inspect --json` prints) beside the tensors, which come as
// their own JSON (`tensorsJson()`): the metadata entries, parsed without
// parsing the rest.

/**
 * The metadata of a JSON form's text: `{ entries: [{ key, type, value }],
 * omitted }`. The text is pretty, one metadata value to a line, so its
 * array ends where the line of `omitted_values` starts (a string value
 * holds no raw newline).
 */
export function metadataOf(json) {
  const from = json.indexOf('"metadata": [') + '"metadata": '.length;
  const to = json.indexOf(',\n  "omitted_values": ');
  const omitted = /^,\n {2}"omitted_values": (\d+)/.exec(json.slice(to, to + 40));
  return { entries: JSON.parse(json.slice(from, to)), omitted: Number(omitted?.[1] ?? 0) };
}

/** HTML with every interpolated value escaped, except what is itself Html. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (value: unknown): string => String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let text = strings[0]!;
  values.forEach((value, i) => {
    const parts = Array.isArray(value) ? value : [value];
    text += parts.map((part) => (part instanceof Html ? part.text : part === undefined || part === null || part === false ? '' : escape(part))).join('');
    text += strings[i + 1]!;
  });
  return new Html(text);
}

/** One piece of text on a page whose contrast with what is behind it is below WCAG AA. */
export interface LowContrast {
  what: string;
  text: string;
  color: string;
  background: string;
  ratio: number;
}

/**
 * Runs in the page (`page.evaluate(lowContrastText, 4.5)`): every visible piece of text — elements'
 * own text, inputs' values and placeholders, the captions' `::before`/`::after` labels — whose
 * computed colour against the first opaque background behind it (its own or an ancestor's) has a
 * contrast ratio under `minRatio` (WCAG 2 relative luminance). Opacity is folded into the colour.
 * Self-contained: Playwright serializes it into the page.
 */
export function lowContrastText(minRatio: number): LowContrast[] {
  const rgba = (css: string): [number, number, number, number] => {
    const m = /rgba?\(([^)]+)\)/.exec(css);
    if (!m) return [0, 0, 0, 0];
    const [r = 0, g = 0, b = 0, a = 1] = m[1]!.split(/[\s,/]+/).filter(Boolean).map(Number);
    return [r, g, b, a];
  };
  const luminance = ([r, g, b]: number[]): number => {
    const lin = (c: number) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(r!) + 0.7152 * lin(g!) + 0.0722 * lin(b!);
  };
  const ratio = (a: number[], b: number[]) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi! + 0.05) / (lo! + 0.05);
  };
  const opacity = (el: Element | null): number => (el ? Number(getComputedStyle(el).opacity) * opacity(el.parentElement) : 1);
  const background = (el: Element | null): [number, number, number, number] => {
    for (let at = el; at; at = at.parentElement) {
      const bg = rgba(getComputedStyle(at).backgroundColor);
      if (bg[3] > 0.99) return bg;
    }
    return [255, 255, 255, 1];
  };
  const blend = (fg: number[], bg: number[], alpha: number) => fg.slice(0, 3).map((c, i) => c * alpha + bg[i]! * (1 - alpha));
  const visible = (el: Element) => {
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden';
  };
  const found: LowContrast[] = [];
  const check = (el: Element, what: string, text: string, style: CSSStyleDeclaration) => {
    if (!text.trim()) return;
    const bg = background(el);
    const fg = rgba(style.color);
    const shown = blend(fg, bg, fg[3] * opacity(el));
    const r = ratio(shown, bg);
    if (r < minRatio) found.push({ what, text: text.trim().slice(0, 60), color: style.color, background: `rgb(${bg.slice(0, 3).join(', ')})`, ratio: Math.round(r * 100) / 100 });
  };
  for (const el of document.querySelectorAll('body *')) {
    if (!visible(el)) continue;
    const name = el.id ? `#${el.id}` : el.tagName.toLowerCase() + (el.className ? `.${String(el.className).split(' ').join('.')}` : '');
    const own = [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent ?? '').join('');
    check(el, name, own, getComputedStyle(el));
    if (el instanceof HTMLInputElement) {
      if (el.value && el.type !== 'password') check(el, `${name} value`, el.value, getComputedStyle(el));
      else if (!el.value) check(el, `${name}::placeholder`, el.placeholder, getComputedStyle(el, '::placeholder'));
    }
    for (const pseudo of ['::before', '::after']) {
      const style = getComputedStyle(el, pseudo);
      const content = style.content;
      if (content && content !== 'none' && content !== 'normal') check(el, `${name}${pseudo}`, content.replace(/^"|"$/g, ''), style);
    }
  }
  return found;
}

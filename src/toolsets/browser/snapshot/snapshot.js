// In-page snapshot walker (see `domsnap.rs`). One function expression for
// `Runtime.callFunctionOn` (or `Runtime.evaluate` as `(<this>)(opts)`).
//
// It walks the flat tree (open shadow roots, slots, optionally same-origin
// iframes) once and returns, as a JSON *string* (one CDP string instead of a
// deep value), a tree of Chromium-named accessibility nodes that
// `domsnap.rs` lends to `outline.rs`'s renderer as outline nodes:
//
//   {"tree": Node, "frames": [{"i": id, "src": url}], "count": n}
//   Node = "text" | {"r": role, "n"?: name, "v"?: value, "i"?: id,
//                    "p"?: {level, checked, pressed, selected, expanded,
//                           disabled, required, readonly, focused,
//                           url (unless opts.urls is false)},
//                    "c"?: [Node], "x"?: 1 (cross-origin frame, not entered)}
//
// Roles are Chromium's AX role names (`image`, `LabelText`, `Iframe`, ...).
// Nodes the renderer treats as inline and transparent (generic, none,
// emphasis, ignored ...) are not emitted: their children take their place,
// which renders the same and keeps the payload small.
//
// Refs: every emitted element gets a per-document id, stable across
// snapshots (a WeakMap on the top window); `window.__hermesRefs` maps every
// id issued in this document to its element (a ref from an earlier snapshot
// of the same document still works), for click/type/annotate:
//   Runtime.evaluate "window.__hermesRefs.get(7)" -> objectId.
(function hermesSnapshot(opts) {
  opts = opts || {};
  const FRAMES = opts.frames !== false; // descend into same-origin iframes
  const PSEUDO = opts.pseudo !== false; // ::before / ::after text
  const URLS = opts.urls !== false; // links' targets (only a full snapshot shows them)
  const W = window;
  const D = document;
  if (!W.__hermesIds) {
    Object.defineProperty(W, '__hermesIds', { value: new WeakMap(), writable: true });
    Object.defineProperty(W, '__hermesNext', { value: 0, writable: true });
  }
  const ids = W.__hermesIds;
  if (!W.__hermesRefs) Object.defineProperty(W, '__hermesRefs', { value: new Map(), writable: true, configurable: true });
  const refs = W.__hermesRefs;
  const frames = [];
  let count = 0;
  // For the change watch below: shadow roots walked, and whether any frame was met.
  const shadows = [];
  let sawFrame = false;

  const idOf = (el) => {
    let i = ids.get(el);
    if (i === undefined) { i = ++W.__hermesNext; ids.set(el, i); }
    refs.set(i, el);
    return i;
  };
  // Collapse whitespace runs and trim; a string whose only whitespace is
  // single spaces needs no replace (most text nodes).
  const RUN = /[^\S ]| {2}/;
  const norm = (s) => {
    s = s || '';
    return (RUN.test(s) ? s.replace(/\s+/g, ' ') : s).trim();
  };

  // The focused element, through shadow roots and same-origin frames.
  let focused = D.activeElement;
  for (;;) {
    if (focused && focused.shadowRoot && focused.shadowRoot.activeElement) focused = focused.shadowRoot.activeElement;
    else if (FRAMES && focused && (focused.tagName === 'IFRAME' || focused.tagName === 'FRAME')) {
      let cd = null; try { cd = focused.contentDocument; } catch (e) {}
      if (cd && cd.activeElement && cd.activeElement !== cd.body) focused = cd.activeElement; else break;
    } else break;
  }
  if (focused && (focused.tagName === 'BODY' || focused.tagName === 'HTML')) focused = null;

  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE', 'BR', 'WBR', 'PARAM', 'SOURCE', 'TRACK', 'DATALIST']);
  // Roles whose name comes from their content.
  const FROM_CONTENT = new Set(['button', 'link', 'heading', 'cell', 'gridcell', 'columnheader', 'rowheader', 'option',
    'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'treeitem', 'checkbox', 'radio', 'switch',
    'DisclosureTriangle', 'tooltip', 'term']);
  // Explicit ARIA roles passed through as the same Chromium role name.
  const ARIA = new Set(['alert', 'alertdialog', 'application', 'article', 'banner', 'blockquote', 'button', 'caption', 'cell',
    'checkbox', 'code', 'columnheader', 'combobox', 'complementary', 'contentinfo', 'definition', 'deletion', 'dialog',
    'document', 'emphasis', 'feed', 'figure', 'form', 'grid', 'gridcell', 'group', 'heading', 'img', 'image', 'insertion', 'link', 'list',
    'listbox', 'listitem', 'log', 'main', 'marquee', 'math', 'menu', 'menubar', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'meter', 'navigation', 'note', 'option', 'paragraph', 'progressbar', 'radio', 'radiogroup', 'region',
    'row', 'rowgroup', 'rowheader', 'scrollbar', 'search', 'searchbox', 'separator', 'slider', 'spinbutton', 'status',
    'strong', 'subscript', 'superscript', 'switch', 'tab', 'table', 'tablist', 'tabpanel', 'term', 'textbox', 'time',
    'timer', 'toolbar', 'tooltip', 'tree', 'treegrid', 'treeitem']);
  // Roles rendered as inline transparent (not emitted; children spliced).
  const SPLICE = new Set(['generic', 'none', 'presentation', 'emphasis', 'strong', 'code', 'subscript', 'superscript',
    'insertion', 'deletion', 'time', 'mark', 'Abbr', 'ruby', 'Span', '']);
  const INPUT_ROLE = {
    button: 'button', submit: 'button', reset: 'button', image: 'button', file: 'button', checkbox: 'checkbox',
    radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox', color: 'ColorWell', date: 'Date',
    'datetime-local': 'DateTime', time: 'InputTime', month: 'DateTime', week: 'DateTime',
  };
  const REQUIRED = new Set(['textbox', 'searchbox', 'combobox', 'listbox', 'spinbutton', 'radiogroup', 'gridcell', 'tree',
    'treegrid', 'columnheader', 'rowheader', 'Date', 'DateTime', 'InputTime']);
  // Containers that neither take nor give a name from their content (Chromium).
  const NO_CONTENT = new Set(['alert', 'alertdialog', 'application', 'Audio', 'article', 'banner', 'ColorWell',
    'complementary', 'contentinfo', 'Date', 'DateTime', 'dialog', 'document', 'feed', 'figure', 'form', 'Iframe',
    'image', 'InputTime', 'listbox', 'log', 'main', 'marquee', 'math', 'MenuListPopup', 'menu', 'menubar', 'meter',
    'navigation', 'note', 'progressbar', 'radiogroup', 'scrollbar', 'search', 'searchbox', 'slider', 'spinbutton',
    'status', 'table', 'tablist', 'tabpanel', 'textbox', 'timer', 'toolbar', 'tree', 'treegrid', 'Video']);
  // Text blocks left out when they hold nothing.
  const DROP_EMPTY = new Set(['paragraph', 'blockquote', 'sectionheader', 'sectionfooter', 'Figcaption', 'caption',
    'LabelText', 'Legend', 'term', 'definition']);
  const FORM_CONTROL = new Set(['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION', 'OPTGROUP']);
  const LABELABLE = new Set(['BUTTON', 'INPUT', 'METER', 'OUTPUT', 'PROGRESS', 'SELECT', 'TEXTAREA']);
  const INLINE_DISPLAY = /^inline/;
  const NON_SPACE = /\S/;

  // A control's labels, from one scan per tree scope: `el.labels` scans the
  // whole scope for each control asked about (a 1,000-row form: 3,000 scans,
  // 0.2 s). A label's `control` is the spec's labeled control (`for`, else its
  // first labelable descendant), so the lists are `el.labels`' in tree order.
  const labelMaps = new Map();
  function labelsOf(el) {
    const root = el.getRootNode();
    let m = labelMaps.get(root);
    if (!m) {
      m = new Map();
      // A walked element is connected: its root is a document or a shadow root.
      for (const l of root.querySelectorAll('label')) {
        const c = l.control;
        if (!c) continue;
        const a = m.get(c);
        if (a) a.push(l); else m.set(c, [l]);
      }
      labelMaps.set(root, m);
    }
    return m.get(el);
  }
  // A custom element: it may be form-associated (labelable) or host a closed
  // shadow root.
  const isCustom = (el) => el.localName.includes('-');
  const inSectioning = (el) => !!(el.parentElement && el.parentElement.closest('article,aside,main,nav,section'));
  const hasName = (el) => el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') || el.hasAttribute('title');

  const MARKERS = { disc: '\u2022', circle: '\u25e6', square: '\u25aa' };
  function listParent(el) {
    const p = el.parentElement;
    if (!p) return false;
    const r = p.getAttribute('role');
    if (r) return r.trim().split(/\s+/)[0] === 'list';
    return p.tagName === 'UL' || p.tagName === 'OL' || p.tagName === 'MENU';
  }

  // Table parts of a role=none/presentation table are presentational too.
  function layoutTable(el) {
    const t = el.closest('table');
    const r = t && t.getAttribute('role');
    return !!r && /^\s*(none|presentation)\b/i.test(r);
  }

  // `ha`: the element has attributes (el.hasAttributes()); without any,
  // the ARIA attributes are not asked for one by one.
  function role(el, tag, ha) {
    const ex = ha && el.getAttribute('role');
    if (ex) {
      for (const r of ex.trim().toLowerCase().split(/\s+/)) {
        if (r === 'none' || r === 'presentation' || r === 'generic') return '';
        if (r === 'img') return 'image';
        if (ARIA.has(r)) return r;
      }
    }
    switch (tag) {
      case 'A': case 'AREA': return el.hasAttribute('href') ? 'link' : '';
      case 'BUTTON': return 'button';
      case 'INPUT': {
        const t = (el.getAttribute('type') || '').toLowerCase();
        if (t === 'hidden') return null;
        if (INPUT_ROLE[t]) return INPUT_ROLE[t];
        return el.hasAttribute('list') ? 'combobox' : 'textbox';
      }
      case 'TEXTAREA': return 'textbox';
      case 'SELECT': return (el.multiple || el.size > 1) ? 'listbox' : 'combobox';
      case 'OPTION': return 'option';
      case 'OPTGROUP': return 'group';
      case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6': return 'heading';
      case 'P': return 'paragraph';
      case 'UL': case 'OL': case 'MENU': return 'list';
      case 'LI': return listParent(el) ? 'listitem' : '';
      case 'DL': return 'DescriptionList';
      case 'DT': return 'term';
      case 'DD': return 'definition';
      case 'NAV': return 'navigation';
      case 'MAIN': return 'main';
      case 'ASIDE': return hasName(el) || !(el.parentElement && el.parentElement.closest('article,aside,nav,section')) ? 'complementary' : '';
      case 'SEARCH': return 'search';
      case 'ARTICLE': return 'article';
      case 'HEADER': return inSectioning(el) ? 'sectionheader' : 'banner';
      case 'FOOTER': return inSectioning(el) ? 'sectionfooter' : 'contentinfo';
      case 'SECTION': return hasName(el) ? 'region' : '';
      case 'FORM': return 'form';
      case 'TABLE': return 'table';
      case 'CAPTION': return layoutTable(el) ? '' : 'caption';
      case 'TR': return layoutTable(el) ? '' : 'row';
      case 'TD': if (layoutTable(el)) return ''; return el.closest('[role=grid],[role=treegrid]') ? 'gridcell' : 'cell';
      case 'TH': if (layoutTable(el)) return ''; return el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader';
      case 'THEAD': case 'TFOOT': return layoutTable(el) ? '' : 'rowgroup';
      case 'FIGURE': return 'figure';
      case 'FIGCAPTION': return 'Figcaption';
      case 'BLOCKQUOTE': return 'blockquote';
      case 'HR': return 'separator';
      case 'IMG': return el.getAttribute('alt') === '' && !el.hasAttribute('title') ? null : 'image';
      case 'SVG': return 'image';
      case 'CANVAS': return 'Canvas';
      case 'VIDEO': return 'Video';
      case 'AUDIO': return 'Audio';
      case 'LABEL': return 'LabelText';
      case 'LEGEND': return 'Legend';
      case 'FIELDSET': return 'group';
      case 'DETAILS': return 'group';
      case 'SUMMARY': return el.parentElement && el.parentElement.tagName === 'DETAILS' ? 'DisclosureTriangle' : '';
      case 'DIALOG': return 'dialog';
      case 'PROGRESS': return 'progressbar';
      case 'METER': return 'meter';
      case 'OUTPUT': return 'status';
      case 'IFRAME': case 'FRAME': return 'Iframe';
      case 'MATH': return 'math';
      case 'EM': return 'emphasis';
      case 'STRONG': return 'strong';
      case 'CODE': return 'code';
      default: return '';
    }
  }

  // Label text: the rendered text of the label(s), the control excluded.
  function textOf(node, except) {
    if (node.nodeType === 3) return node.data;
    if (node.nodeType !== 1 || node === except) return '';
    const tag = node.tagName;
    if (SKIP.has(tag)) return '';
    if (node.getAttribute('aria-hidden') === 'true') return '';
    if (node.hasAttribute('aria-label')) return ' ' + node.getAttribute('aria-label') + ' ';
    if (tag === 'IMG') return node.getAttribute('alt') || '';
    if (tag === 'INPUT' || tag === 'TEXTAREA') return node.type === 'password' ? '' : ' ' + (node.value || '') + ' ';
    if (tag === 'SELECT') { const o = node.selectedOptions && node.selectedOptions[0]; return o ? ' ' + o.label + ' ' : ''; }
    let s = '';
    for (let c = node.firstChild; c; c = c.nextSibling) s += textOf(c, except);
    return s;
  }
  function byIds(el, attr) {
    const root = el.getRootNode();
    const out = [];
    for (const id of (el.getAttribute(attr) || '').split(/\s+/)) {
      if (!id) continue;
      const t = root.getElementById ? root.getElementById(id) : D.getElementById(id);
      if (t) out.push(norm(t.getAttribute('aria-label') || textOf(t, null)));
    }
    return out.filter(Boolean).join(' ');
  }

  function nameOf(el, tag, r, content, ha) {
    if (ha) {
      if (el.hasAttribute('aria-labelledby')) { const n = byIds(el, 'aria-labelledby'); if (n) return n; }
      const al = norm(el.getAttribute('aria-label'));
      if (al) return al;
    }
    const title = ha ? norm(el.getAttribute('title')) : '';
    if (tag === 'INPUT') {
      const t = (el.type || '').toLowerCase();
      if (t === 'submit' || t === 'reset' || t === 'button') {
        return norm(el.value) || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : '') || title;
      }
      if (t === 'image') return norm(el.getAttribute('alt')) || norm(el.value) || title || 'Submit';
    }
    // Only a labelable element can be a label's control.
    const labels = (LABELABLE.has(tag) || isCustom(el)) && labelsOf(el);
    if (labels) {
      const n = norm(labels.map((l) => textOf(l, el)).join(' '));
      if (n) return n;
    }
    switch (tag) {
      case 'INPUT': case 'TEXTAREA': return title || norm(el.getAttribute('placeholder'));
      case 'IMG': case 'AREA': return norm(el.getAttribute('alt')) || title;
      case 'FIELDSET': { const l = [...el.children].find((c) => c.tagName === 'LEGEND'); if (l) return norm(textOf(l, null)); break; }
      case 'TABLE': { const c = el.caption; if (c) return norm(textOf(c, null)); break; }
      case 'SVG': { const t = [...el.children].find((c) => c.tagName.toLowerCase() === 'title'); if (t) return norm(t.textContent); break; }
      case 'OPTGROUP': return norm(el.label);
      case 'OPTION': return norm(el.label);
    }
    if (content !== null && FROM_CONTENT.has(r)) { const n = norm(content); if (n) return n; }
    return title;
  }

  function valueOf(el, tag, r, ha) {
    if (tag === 'INPUT') {
      const t = (el.type || '').toLowerCase();
      if (r === 'checkbox' || r === 'radio' || r === 'button') return '';
      if (t === 'password') return '\u2022'.repeat(el.value.length);
      return el.value;
    }
    if (tag === 'TEXTAREA') return el.value;
    if (tag === 'SELECT') {
      if (r !== 'combobox') return '';
      const o = el.selectedOptions[0];
      return o ? norm(o.label) : '';
    }
    if (tag === 'PROGRESS' || tag === 'METER') return el.hasAttribute('value') ? String(el.value) : '';
    const vt = ha && (el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow'));
    return vt || '';
  }

  function props(el, tag, r, ha) {
    const p = {};
    let any = false;
    const set = (k, v) => { p[k] = v; any = true; };
    if (r === 'heading') {
      const l = ha ? parseInt(el.getAttribute('aria-level'), 10) : NaN;
      set('level', l > 0 ? l : (/^H[1-6]$/.test(tag) ? +tag[1] : 2));
    }
    if (tag === 'INPUT' && (r === 'checkbox' || r === 'radio')) {
      set('checked', el.indeterminate ? 'mixed' : el.checked ? 'true' : 'false');
    } else if (ha && el.hasAttribute('aria-checked')) {
      const c = el.getAttribute('aria-checked');
      set('checked', c === 'mixed' ? 'mixed' : c === 'true' ? 'true' : 'false');
    }
    const pr = ha && el.getAttribute('aria-pressed');
    if (pr === 'true' || pr === 'mixed') set('pressed', pr);
    if (tag === 'OPTION') set('selected', el.selected);
    else if (ha && el.getAttribute('aria-selected') === 'true') set('selected', true);
    const ex = ha && el.getAttribute('aria-expanded');
    if (ex === 'true' || ex === 'false') set('expanded', ex === 'true');
    else if (r === 'combobox' && tag === 'SELECT') set('expanded', false);
    else if (r === 'DisclosureTriangle') set('expanded', el.parentElement.open);
    if ((FORM_CONTROL.has(tag) && el.matches(':disabled')) || (ha && el.getAttribute('aria-disabled') === 'true')) set('disabled', true);
    if ((el.required || (ha && el.getAttribute('aria-required') === 'true')) && REQUIRED.has(r)) set('required', true);
    if (((tag === 'INPUT' || tag === 'TEXTAREA') && el.readOnly) || (ha && el.getAttribute('aria-readonly') === 'true')) set('readonly', true);
    if (el === focused) set('focused', true);
    if (URLS && r === 'link' && el.href) set('url', String(el.href));
    return any ? p : null;
  }

  function transform(s, tt) {
    if (tt === 'none' || !tt) return s;
    if (tt === 'uppercase') return s.toUpperCase();
    if (tt === 'lowercase') return s.toLowerCase();
    if (tt === 'capitalize') return s.replace(/(^|\s)(\p{L})/gu, (m, a, b) => a + b.toUpperCase());
    return s;
  }
  // The elements a `::before`/`::after` rule that sets `content` can match,
  // per tree scope, or null for "any": asking every element's pseudo styles
  // costs a style resolution each (a third of a walk). The document's rules
  // are read once per walk; a sheet that cannot be read (cross-origin), a
  // rule nested or scoped, or a selector that cannot be narrowed means null,
  // and so does a shadow root. Rules of a shadow root can also reach a host
  // (`:host::before`) or a slotted element outside it: those are always
  // asked, as is every custom element (it may host a closed shadow root).
  // What stays unseen is `:host::before` from a closed shadow root of a
  // built-in element (`div`, `p`, ...), whose content the walker does not
  // see either.
  const pseudoHosts = new Map();
  function splitList(t) {
    const out = [];
    let depth = 0, q = '', start = 0;
    for (let i = 0; i < t.length; i++) {
      const ch = t[i];
      if (q) { if (ch === '\\') i++; else if (ch === q) q = ''; }
      else if (ch === '"' || ch === "'") q = ch;
      else if (ch === '\\') i++;
      else if (ch === '(' || ch === '[') depth++;
      else if (ch === ')' || ch === ']') depth--;
      else if (ch === ',' && depth === 0) { out.push(t.slice(start, i)); start = i + 1; }
    }
    out.push(t.slice(start));
    return out;
  }
  const PSEUDO_SEL = /::?(?:before|after)(?![\w-])/i;
  // A rule that sets no content gives none: its pseudo element's comes from
  // another rule, or there is none.
  const setsContent = (st) => !st || st.getPropertyValue('content') || st.getPropertyValue('all');
  function pseudoSelectors(rules, sels, nested) {
    for (const rule of rules) {
      if (rule.styleSheet !== undefined && rule.href !== undefined) { // @import
        if (!rule.styleSheet) continue;
        if (!pseudoSelectors(rule.styleSheet.cssRules, sels, nested)) return false;
        continue;
      }
      const text = rule.selectorText;
      if (typeof text === 'string' && PSEUDO_SEL.test(text) && setsContent(rule.style)) {
        if (nested) return false; // `&`, `:scope`: relative to a rule we do not follow
        for (const sel of splitList(text)) {
          const m = PSEUDO_SEL.exec(sel);
          if (!m) continue;
          let head = sel.slice(0, m.index);
          if (head.trim() === '' || head.trim() === '*') return false;
          if (/[\s>+~]$/.test(head)) head += '*';
          sels.push(head);
        }
      }
      if (rule.cssRules && rule.cssRules.length) {
        // Inside a style rule (nesting) or `@scope`, selectors are relative.
        const relative = nested || typeof text === 'string' || rule.constructor.name === 'CSSScopeRule';
        if (!pseudoSelectors(rule.cssRules, sels, relative)) return false;
      }
    }
    return true;
  }
  function pseudoCandidates(root) {
    if (root.nodeType !== 9) return null;
    let c = pseudoHosts.get(root);
    if (c !== undefined) return c;
    c = null;
    try {
      const sels = ['q']; // the UA sheet's open-quote / close-quote
      const sheets = [...root.styleSheets, ...(root.adoptedStyleSheets || [])];
      if (sheets.every((sheet) => pseudoSelectors(sheet.cssRules, sels, false))) {
        c = new Set(root.querySelectorAll(sels.join(',')));
      }
    } catch (e) {
      // a cross-origin sheet, or a selector querySelectorAll refuses: c stays null
    }
    pseudoHosts.set(root, c);
    return c;
  }
  // Whether `el` may have `::before`/`::after` content (asking costs a
  // style resolution each).
  function mayPseudo(el) {
    const hosts = pseudoCandidates(scope || el.getRootNode());
    return !hosts || hosts.has(el) || !!el.shadowRoot || (!scope && !!el.assignedSlot) || isCustom(el);
  }
  function pseudo(el, which) {
    const c = getComputedStyle(el, which).content;
    if (!c || c === 'none' || c === 'normal') return '';
    let s = '';
    c.replace(/"((?:[^"\\]|\\.)*)"|(open-quote)|(close-quote)/g, (m, t, o, q) => {
      s += o ? '\u201c' : q ? '\u201d' : t.replace(/\\(.)/g, '$1');
      return m;
    });
    return s;
  }

  // The tree scope (document or shadow root) of the nodes being walked, or
  // null under a slot: assigned nodes can come from any scope. Known, it
  // saves asking every element for its root, and an element reached as a
  // child of its parent (not through a slot) has no assigned slot.
  let scope = D;

  // Walk `node`'s children into `out`; returns their name-from-content text
  // when `want` (else '').
  function walkKids(el, out, want, visible, tt) {
    let text = '';
    const tag = el.tagName;
    if (tag === 'DETAILS' && !el.open) {
      const s = [...el.children].find((c) => c.tagName === 'SUMMARY');
      return s ? walk(s, out, want, visible, tt) : '';
    }
    // Children in flat-tree order: shadow root, slot assignments, light DOM.
    const sr = el.shadowRoot;
    const slotted = !sr && tag === 'SLOT' ? el.assignedNodes({ flatten: true }) : null;
    const outer = scope;
    if (sr) {
      shadows.push(sr);
      scope = sr;
      for (let c = sr.firstChild; c; c = c.nextSibling) text += walk(c, out, want, visible, tt) || '';
    } else if (slotted && slotted.length) {
      scope = null;
      for (let i = 0; i < slotted.length; i++) text += walk(slotted[i], out, want, visible, tt) || '';
    } else {
      for (let c = el.firstChild; c; c = c.nextSibling) text += walk(c, out, want, visible, tt) || '';
    }
    scope = outer;
    return text;
  }

  function walk(node, out, want, visible, tt) {
    const type = node.nodeType;
    if (type === 3) {
      if (!visible) return '';
      const d = node.data;
      // Whitespace alone shows nothing, and has no case to change.
      if (!NON_SPACE.test(d)) return want ? d : '';
      // `tt` is a text-transform, or the parent's computed style to read it
      // from (only a text child that shows something needs it).
      if (typeof tt !== 'string') tt = tt.textTransform;
      const t = norm(transform(d, tt));
      if (t) out.push(t);
      return want ? transform(d, tt) : '';
    }
    if (type === 11 || type === 9) { // shadow root / document fragment
      let s = '';
      for (let c = node.firstChild; c; c = c.nextSibling) s += walk(c, out, want, visible, tt);
      return s;
    }
    if (type !== 1) return '';
    const el = node;
    const tag = el.tagName.toUpperCase();
    if (tag === 'BR' || tag === 'WBR') return want ? ' ' : '';
    if (SKIP.has(tag)) return '';
    const ha = el.hasAttributes();
    if (ha && el.getAttribute('aria-hidden') === 'true') return '';
    const cs = getComputedStyle(el);
    const disp = cs.display;
    if (disp === 'none') return '';
    const vis = cs.visibility === 'visible';
    let r = role(el, tag, ha);
    if (r === null) return '';
    // A label around a checkbox/radio: its text is the control's name.
    if (r === 'LabelText' && el.control && el.contains(el.control) && (el.control.type === 'checkbox' || el.control.type === 'radio')) {
      const sink = [];
      walkKids(el, sink, false, vis, cs);
      for (const x of sink) if (typeof x !== 'string') out.push(x);
      return want ? textOf(el, null) : '';
    }
    let block = want && !INLINE_DISPLAY.test(disp) ? ' ' : '';
    if (SPLICE.has(r)) {
      // Inline transparent: children take its place.
      let s = '';
      if (tag === 'LI' && vis && cs.display === 'list-item') {
        const m = MARKERS[cs.listStyleType];
        if (m) { out.push(m); s += m + ' '; }
      }
      const pp = PSEUDO && vis && mayPseudo(el);
      if (pp) { const b = pseudo(el, '::before'); if (b) { out.push(norm(b)); s += b; } }
      s += walkKids(el, out, want, vis, cs);
      if (pp) { const a = pseudo(el, '::after'); if (a) { out.push(norm(a)); s += a; } }
      if (want && ha && el.hasAttribute('aria-label')) s = el.getAttribute('aria-label');
      return want ? block + s + block : '';
    }
    const node_ = { r };
    count++;
    const kids = [];
    let content = '';
    const leaf = tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'IMG' || tag === 'SVG' || tag === 'svg' || tag === 'PROGRESS' || tag === 'METER';
    const needContent = FROM_CONTENT.has(r) || want;
    if (tag === 'SELECT') {
      const popup = r === 'combobox' ? { r: 'MenuListPopup', c: [] } : null;
      const into = popup ? popup.c : kids;
      for (const c of el.children) {
        if (c.tagName === 'OPTION') walk(c, into, false, true, cs);
        else if (c.tagName === 'OPTGROUP') {
          const g = { r: 'group', i: idOf(c), c: [] };
          const gn = norm(c.label); if (gn) g.n = gn;
          for (const o of c.children) if (o.tagName === 'OPTION') walk(o, g.c, false, true, cs);
          into.push(g);
        }
      }
      if (popup) kids.push(popup);
    } else if (tag === 'OPTION') {
      // name only
    } else if (r === 'Iframe') {
      sawFrame = true;
      let cd = null;
      try { cd = el.contentDocument; } catch (e) {}
      if (!FRAMES) {
        // leaf, as Accessibility.getFullAXTree shows it
      } else if (cd && cd.documentElement) {
        const root = { r: 'RootWebArea', n: norm(cd.title), c: [] };
        const outer = scope;
        scope = cd;
        walk(cd.documentElement, root.c, false, true, 'none');
        scope = outer;
        kids.push(root);
      } else {
        node_.x = 1;
        frames.push({ i: 0, src: el.src || '' }); // id filled below
      }
    } else if (!leaf) {
      const pp = PSEUDO && vis && mayPseudo(el);
      if (pp) { const b = pseudo(el, '::before'); if (b) { kids.push(norm(b)); content += b; } }
      content += walkKids(el, kids, needContent, vis, cs);
      if (pp) { const a = pseudo(el, '::after'); if (a) { kids.push(norm(a)); content += a; } }
    }
    if (!vis && r !== 'Iframe') {
      // visibility:hidden: the element is ignored; visible descendants stay.
      for (const k of kids) out.push(k);
      count--;
      return '';
    }
    const name = nameOf(el, tag, r, needContent ? content : null, ha);
    if (!kids.length && !name && DROP_EMPTY.has(r)) { count--; return ''; }
    if (name) node_.n = name;
    const v = valueOf(el, tag, r, ha);
    if (v) node_.v = v;
    node_.i = idOf(el);
    if (node_.x) frames[frames.length - 1].i = node_.i;
    const p = props(el, tag, r, ha);
    if (p) node_.p = p;
    if (kids.length) node_.c = kids;
    out.push(node_);
    if (!want) return '';
    // Contribution to an ancestor's name.
    let contrib;
    if (ha && el.hasAttribute('aria-label')) contrib = el.getAttribute('aria-label');
    else if (tag === 'IMG' || tag === 'SVG') contrib = ' ' + name + ' ';
    else if (tag === 'FIGURE' || tag === 'TABLE' || tag === 'FIELDSET') contrib = name;
    else if (tag === 'INPUT' || tag === 'TEXTAREA') contrib = r === 'button' ? name : v;
    else if (tag === 'SELECT') contrib = v;
    else if (NO_CONTENT.has(r)) contrib = ha && el.hasAttribute('title') ? name : '';
    else contrib = content;
    return block + contrib + block;
  }

  const tree = { r: 'RootWebArea', n: norm(D.title), c: [] };
  if (D.documentElement) walk(D.documentElement, tree.c, false, true, 'none');
  watch();
  return JSON.stringify({ tree, frames, count });

  // Change watch (navigate's snapshot is reused by the next
  // browser_snapshot when the page provably did not change; the check is
  // `snapshot_tool.rs`' UNCHANGED_JS). Anything that can change this walk's
  // output without our tools acting sets `dirty`: DOM mutations (document and
  // every shadow root walked), focus, user input, toggles and CSS
  // animations/transitions (computed visibility). Values a script sets
  // without a mutation (`el.value = ...`, `.checked`, `.selectedIndex`) are
  // caught by comparing a fingerprint of every form control's state. A page
  // with frames is never reused. The walker reads no geometry, so scrolling
  // does not matter.
  function watch() {
    let w = W.__hermesWatch;
    if (!w) {
      w = { dirty: true, walks: 0, roots: [], frames: true, fp0: '' };
      const dirty = () => { w.dirty = true; };
      w.mo = new MutationObserver(dirty);
      for (const t of ['input', 'change', 'focusin', 'focusout', 'toggle', 'reset', 'animationstart', 'animationend',
        'animationcancel', 'transitionrun', 'transitionend', 'transitioncancel', 'resize', 'pageshow']) {
        W.addEventListener(t, dirty, true);
      }
      w.fp = () => {
        let s = '';
        const add = (root) => {
          for (const e of root.querySelectorAll('input,textarea,select')) {
            if (e.tagName === 'SELECT') {
              for (const o of e.options) s += o.selected ? '1' : '0';
            } else {
              s += (e.checked ? '1' : '0') + (e.indeterminate ? '1' : '0') + e.value;
            }
            s += '\u0000';
          }
        };
        add(D);
        for (const r of w.roots) add(r);
        return s;
      };
      Object.defineProperty(W, '__hermesWatch', { value: w, configurable: true });
    }
    const OBS = { subtree: true, childList: true, attributes: true, characterData: true };
    w.mo.observe(D, OBS);
    for (const r of shadows) w.mo.observe(r, OBS);
    w.mo.takeRecords();
    w.roots = shadows;
    w.frames = sawFrame || frames.length > 0;
    w.fp0 = w.fp();
    w.walks++;
    w.dirty = false;
  }
})

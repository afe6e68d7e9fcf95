import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { yaml } from '@codemirror/lang-yaml';
import { defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { EditorState, type Text } from '@codemirror/state';
import { EditorView, keymap, lineNumbers } from '@codemirror/view';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api, ok, type FieldError } from '../../api/client';
import { ProblemMessage } from '../../components/ui';
import { asProblem, useAction } from '../../hooks';
import { useUnsavedEdits } from '../../router';
import { useSession } from '../../session';
import type { Version } from './types';

/** The console's look (its style sheet does not reach into the shadow root). */
const THEME = EditorView.theme({
  '&': { border: '1px solid #d1d5db', borderRadius: '6px', background: '#fff', maxHeight: '32rem' },
  '&.cm-focused': { outline: '2px solid #1d4ed8', outlineOffset: '1px' },
  '.cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, monospace', fontSize: '0.85rem' },
});

/** Where the API said a problem is: its line (and column), else the first line. */
function diagnostic(doc: Text, problem: FieldError): Diagnostic {
  const line = doc.line(Math.min(Math.max(problem.line ?? 1, 1), doc.lines));
  const from = Math.min(line.from + Math.max((problem.column ?? 1) - 1, 0), line.to);
  return { from, to: Math.max(from, line.to), severity: 'error', message: problemText(problem) };
}

const problemText = (p: FieldError) => (p.path === '(file)' ? p.message : `${p.path}: ${p.message}`);

/**
 * The draft's rule file in a YAML editor (CodeMirror 6: highlighting, line numbers, undo): each
 * change is checked by the API's own validation (`…/validate`, half a second after typing stops),
 * its messages shown at their line in the gutter and listed below the editor, and the text is saved
 * as the draft exactly as typed. Tab is left to move focus, so the editor is no keyboard trap.
 */
export function YamlEditor({ eventType, version, onSaved, onDirty }: { eventType: string; version: Version; onSaved: () => void; onDirty?: (dirty: boolean) => void }) {
  const { account } = useSession();
  const path = { account: account!, event_type: eventType };
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const [text, setText] = useState(version.yaml);
  const [problems, setProblems] = useState<FieldError[] | null>(null);
  const listId = useId();
  const save = useAction(async () => {
    await ok(api.PUT('/admin/v1/accounts/{account}/rule-sets/{event_type}/draft', { params: { path }, body: { yaml: text } }));
    onSaved();
  });
  const dirty = text !== version.yaml;
  useUnsavedEdits(dirty);
  useEffect(() => onDirty?.(dirty), [dirty]);

  useEffect(() => {
    const check = linter(async (v) => {
      try {
        await ok(api.POST('/admin/v1/accounts/{account}/rule-sets/{event_type}/validate', { params: { path }, body: { yaml: v.state.doc.toString() } }));
        setProblems([]);
        return [];
      } catch (error) {
        const problem = asProblem(error);
        const found = problem.errors.length > 0 ? problem.errors : [{ path: '(file)', message: problem.detail || problem.title }];
        setProblems(found);
        return found.map((p) => diagnostic(v.state.doc, p));
      }
    }, { delay: 500 });
    // In a shadow root: CodeMirror then styles itself with constructed style sheets, which the
    // console's CSP (style-src 'self') allows, where a <style> element would be refused.
    const shadow = host.current!.shadowRoot ?? host.current!.attachShadow({ mode: 'open' });
    const parent = document.createElement('div');
    shadow.replaceChildren(parent);
    const editor = new EditorView({
      root: shadow,
      parent,
      state: EditorState.create({
        doc: version.yaml,
        extensions: [
          lineNumbers(), history(), keymap.of([...defaultKeymap, ...historyKeymap]), yaml(), syntaxHighlighting(defaultHighlightStyle),
          lintGutter(), check, EditorView.lineWrapping, THEME,
          EditorView.contentAttributes.of({ 'aria-label': `Rule file of ${eventType} (YAML)`, 'aria-describedby': listId }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) setText(update.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = editor;
    setText(version.yaml);
    return () => editor.destroy();
  }, [version.yaml_sha256]);

  return (
    <section class="yaml-editor" aria-label="YAML of the draft">
      <div ref={host} class="yaml-host" />
      <div id={listId} aria-live="polite">
        {problems === null ? null : problems.length === 0 ? <p class="muted">The text is valid.</p> : (
          <ul class="problem yaml-problems">
            {problems.map((p, i) => <li key={i}>{p.line ? `Line ${p.line}: ` : ''}{problemText(p)}</li>)}
          </ul>
        )}
      </div>
      <div class="actions">
        <button type="button" class="primary" disabled={!dirty || save.busy} onClick={() => void save.run()}>Save the YAML as the draft</button>
        <button type="button" disabled={!dirty || save.busy} onClick={() => view.current?.dispatch({ changes: { from: 0, to: view.current.state.doc.length, insert: version.yaml } })}>Undo all changes</button>
      </div>
      <ProblemMessage problem={save.error} />
    </section>
  );
}

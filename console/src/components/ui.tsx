import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { useEffect, useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { ApiProblem } from '../api/client';

/** Small shared pieces. Everything is rendered as text by Preact: nothing here builds HTML. */

export function ProblemMessage({ problem }: { problem: ApiProblem | undefined }) {
  if (!problem) return null;
  return (
    <div class="problem" role="alert">
      <strong>{problem.title}</strong>
      {problem.detail && problem.detail !== problem.title ? <span> {problem.detail}</span> : null}
      {problem.errors.length > 0 ? (
        <ul>
          {problem.errors.map((e) => (
            <li key={e.path}>
              <code>{e.path}</code>: {e.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

type InputProps = InputHTMLAttributes<HTMLInputElement> & { label: string; error?: string | undefined; hint?: string };

/** A labelled input; an error from the API is tied to it with aria-describedby. */
export function Field({ label, error, hint, ...input }: InputProps) {
  const id = useId();
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} aria-invalid={error ? true : undefined} aria-describedby={describedBy} {...input} />
      {hint ? <small id={`${id}-hint`}>{hint}</small> : null}
      {error ? <small id={`${id}-error`} class="field-error">{error}</small> : null}
    </div>
  );
}

export function Time({ at, empty = 'never' }: { at: string | null | undefined; empty?: string }) {
  if (!at) return <span class="muted">{empty}</span>;
  const date = new Date(at);
  return <time dateTime={at} title={at}>{date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}</time>;
}

/** Copies `text`; where the Clipboard API is missing (plain http on another host) selects it for Ctrl+C. */
export function CopyButton({ text, label = 'Copy', target }: { text: string; label?: string; target?: () => HTMLInputElement | HTMLTextAreaElement | null }) {
  const [state, setState] = useState<'idle' | 'copied' | 'select'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      target?.()?.select();
      setState('select');
    }
  };
  return (
    <span class="copy">
      <button type="button" onClick={copy}>{label}</button>
      <span role="status" class="muted">{state === 'copied' ? 'Copied' : state === 'select' ? 'Selected: press Ctrl+C' : ''}</span>
    </span>
  );
}

/**
 * Text that may scroll (a rule file, a JSON body, a diff): it takes focus, so a keyboard user can
 * scroll it, and is named by `label` (a plain <pre> may not carry a name: it needs a role).
 */
export function ScrollingText({ label, class: className, landmark = false, children }: { label: string; class?: string; landmark?: boolean; children: ComponentChildren }) {
  return <pre class={className} tabIndex={0} role={landmark ? 'region' : 'group'} aria-label={label}>{children}</pre>;
}

/**
 * Where focus goes back when a dialog closes: to the control that opened it, when focus was inside
 * the dialog (or lost to the page) and the control is still there; else to the page's main
 * heading. Call it first in the dialog's component, with a ref to its element.
 */
export function useReturnFocus(ref: { current: HTMLElement | null }) {
  // Noted at the first render, which runs right after the click or key that opened it, before the
  // dialog's showModal() (a layout effect declared after this hook) moves focus inside.
  const [opener] = useState(() => (document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null));
  // A layout effect: Preact runs its cleanup in the closing render, before it removes the element,
  // so where focus is then says whether it was inside. A plain effect's cleanup runs after the next
  // paint (Preact 11), the element gone and focus wherever the browser, or app.tsx's check for focus
  // lost to the page, has put it by then.
  useLayoutEffect(() => {
    return () => {
      const inside = ref.current?.contains(document.activeElement) || document.activeElement === document.body || document.activeElement === null;
      if (!inside) return;
      // The dialog's close() (its own layout cleanup, next) gives focus back to the opener already,
      // as the browser does for a modal dialog; this is for the rest. Once the closing render is
      // done, before any timer: the opener still there takes focus; one replaced (re-rendered) or
      // gone by then is looked for after whatever render comes next; else the heading, now or once
      // the page shows it.
      const back = (control: HTMLElement | null | undefined) => {
        control?.focus();
        if (!control || document.activeElement !== control) headingWanted.value = !focusMainHeading();
      };
      queueMicrotask(() => {
        if (opener?.isConnected) back(opener);
        else setTimeout(() => back(opener && sameControl(opener)));
      });
    };
  }, []);
}

/** The control on the page now that is `gone` rendered again: the one with its tag, id, name and text (none if two have them). */
export function sameControl(gone: HTMLElement): HTMLElement | undefined {
  const signature = (e: Element) => [e.tagName, e.id, e.getAttribute('aria-label'), e.textContent].join('\n');
  const wanted = signature(gone);
  const found = [...document.querySelectorAll<HTMLElement>(`#main ${gone.tagName}`)].filter((e) => signature(e) === wanted);
  return found.length === 1 ? found[0] : undefined;
}

/** A route change found no heading yet (the page was loading): the next main heading shown takes focus. */
export const headingWanted = { value: false };

/** Focus on the page's main heading (a route change, or a control that went away). */
export function focusMainHeading(): boolean {
  const heading = document.querySelector<HTMLElement>('#main h1');
  heading?.focus();
  return heading !== null;
}

/**
 * A modal confirmation (the native <dialog>: focus stays inside, Escape cancels). It says what
 * the action stops, and runs it only on the explicit button. Closed, it gives focus back to the
 * control that opened it.
 */
export function Confirm({ title, children, action, onConfirm, onCancel, busy, problem }: {
  title: string;
  children: ComponentChildren;
  action: string;
  onConfirm: () => void;
  onCancel: () => void;
  busy?: boolean;
  problem?: ApiProblem | undefined;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  // First: it notes the opener before showModal() moves focus, and sees focus inside before close().
  // Both layout effects, so their cleanups run in that order in the closing render.
  useReturnFocus(ref);
  useLayoutEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog ref={ref} aria-labelledby={`${id}-title`} onCancel={(e) => { e.preventDefault(); onCancel(); }}>
      <h2 id={`${id}-title`}>{title}</h2>
      <div class="dialog-body">{children}</div>
      <ProblemMessage problem={problem} />
      <div class="actions">
        <button type="button" onClick={onCancel} autofocus>Cancel</button>
        <button type="button" class="danger" onClick={onConfirm} disabled={busy}>{action}</button>
      </div>
    </dialog>
  );
}

export function Loading({ what }: { what: string }) {
  return <p class="muted" role="status">Loading {what}…</p>;
}

/** A page: its main heading (focusable from script, for a route change), an intro and the rest. */
export function Page({ title, children, intro }: { title: string; intro?: ComponentChildren; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (!headingWanted.value) return;
    headingWanted.value = false;
    heading.current?.focus();
  }, []);
  return (
    <>
      <h1 ref={heading} tabIndex={-1}>{title}</h1>
      {intro ? <p class="intro">{intro}</p> : null}
      {children}
    </>
  );
}

/** A decision's state as coloured text (the colour is never the only cue: the word is there). */
export function StateBadge({ state }: { state: string }) {
  return <span class={`state ${state === 'approve' ? 'ok' : state === 'review' ? 'warn' : 'bad'}`}>{state}</span>;
}

/** A labelled select of `[value, text]` options. */
export function SelectField({ label, value, options, onChange }: { label: string; value: string; options: Array<[string, string]>; onChange: (value: string) => void }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {options.map(([v, text]) => <option key={v} value={v}>{text}</option>)}
      </select>
    </div>
  );
}

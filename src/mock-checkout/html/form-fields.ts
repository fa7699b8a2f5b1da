import type { IssueDetail } from '../validation.js';
import { html, type SafeHtml } from './template.js';

/** Field name → first message, for showing validation errors beside the inputs. */
export type FieldErrors = Record<string, string>;

/** Groups issues by their top-level field; list items (e.g. one webhook URL) say which line failed. */
export function fieldErrorsFrom(issues: IssueDetail[]): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of issues) {
    const [field, index] = issue.path.split('.');
    const name = field === undefined || field === '(root)' ? 'form' : field;
    const message = index !== undefined && /^\d+$/.test(index) ? `Line ${Number(index) + 1}: ${issue.message}` : issue.message;
    errors[name] ??= message;
  }
  return errors;
}

export interface InputOptions {
  name: string;
  label: string;
  value: string;
  errors: FieldErrors;
  type?: string;
  hint?: string;
  required?: boolean;
  attributes?: SafeHtml;
}

export function inputField({ name, label, value, errors, type = 'text', hint, required, attributes }: InputOptions): SafeHtml {
  const error = errors[name];
  return html`<label for="${name}">${label}</label>
<input id="${name}" name="${name}" type="${type}" value="${value}"${required ? html` required` : ''}${error ? html` aria-invalid="true"` : ''} ${attributes ?? ''}>
${hint ? html`<div class="hint">${hint}</div>` : ''}${errorLine(error)}`;
}

export function errorLine(error: string | undefined): SafeHtml {
  return error ? html`<div class="error" role="alert">${error}</div>` : html``;
}

/** A form body value as a trimmed string; repeated or missing fields become ''. */
export function formText(form: unknown, name: string): string {
  const value = (form as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

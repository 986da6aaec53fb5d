import { type ComponentChildren } from 'preact';
import { Link } from './router.js';

export interface Section {
  path: string;
  label: string;
}

/** The frame of a set of admin pages: their navigation, then the current page as <main>. */
export function SectionLayout(props: {
  label: string;
  sections: Section[];
  current: Section | undefined;
  children: ComponentChildren;
}) {
  return (
    <div class="admin-layout">
      <nav class="admin-nav" aria-label={props.label}>
        {props.sections.map((section) => (
          <Link key={section.path} href={section.path} current={section === props.current}>
            {section.label}
          </Link>
        ))}
      </nav>
      <main id="main" class="page">
        {props.children}
      </main>
    </div>
  );
}

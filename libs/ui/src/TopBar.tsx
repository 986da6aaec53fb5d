import { type ComponentChildren } from 'preact';
import { Link } from './router.js';
import { type Section } from './SectionLayout.js';

/** An app's top bar: skip link, its name, its main navigation, and who is signed in. */
export function TopBar(props: {
  brand: string;
  sections: Section[];
  current: Section | undefined;
  children?: ComponentChildren;
}) {
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">{props.brand}</span>
        <nav aria-label="Main">
          {props.sections.map((section) => (
            <Link key={section.path} href={section.path} current={section === props.current}>
              {section.label}
            </Link>
          ))}
        </nav>
        <span class="who">{props.children}</span>
      </header>
    </>
  );
}

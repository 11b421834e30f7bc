// A route module as Reflex compiles one (.web/app/routes/_index.jsx), for tests/e2e/test_dev_overlay_ui.py:
// the test transforms it with esbuild (inline source map) and serves it as the page's module.
import { Fragment } from "react";

// reflex-lookout page: {"file": "other_app/other_app.py", "function": "index", "line": 82, "module": "other_app.other_app"}

function Header() {
  return (
    <header>
      <h1>
        Other app
      </h1>
    </header>
  );
}

export function OtherAppThrower() {
  const prices = [7, 8];
  const total = prices.reduce((sum, price) => sum + price, 0);
  if (total > 10) {
    throw new Error("Other app: the thrower threw");
  }
  return <p>{total}</p>;
}

export default function Component() {
  return (
    <Fragment>
      <Header />
      <OtherAppThrower />
    </Fragment>
  );
}

// The page's translations for every script: Django's JavaScript catalogue (/jsi18n/<lang>/, loaded
// by base.html just before this file) in the page's language, or the English text itself when the
// catalogue is missing. Sentences built from parts are one catalogue string with named
// placeholders, filled by tf(text, {name: value}) (word order differs between languages).
// Scripts read window.vivaI18n = {gettext, ngettext, tf}.
(function () {
  "use strict";
  const catalogue = window.django || {
    gettext: (text) => text,
    ngettext: (one, many, n) => (n === 1 ? one : many),
    interpolate: (text, values) => text.replace(/%\((\w+)\)s/g, (_, key) => String(values[key])),
  };
  window.vivaI18n = Object.freeze({
    gettext: (text) => catalogue.gettext(text),
    ngettext: (one, many, n) => catalogue.ngettext(one, many, n),
    tf: (text, values) => catalogue.interpolate(text, values, true),
  });
})();

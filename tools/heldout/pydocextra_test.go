package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// The pydoc-extra set's sources are pinned with their licence, group, folder and site, once
// each, and none is a package another Debian-fed set fetches.
func TestPydocExtraPackages(t *testing.T) {
	used := map[string]bool{}
	for _, ps := range [][]debPackage{debianPackages, hardNegPackages} {
		for _, p := range ps {
			used[p.Name] = true
		}
	}
	groups := map[string]bool{"language": true, "web": true, "security": true, "db": true, "http": true, "process": true, "tooling": true}
	for _, p := range pydocPackages {
		if used[p.Name] || p.Version == "" || p.License == "" || !groups[p.Group] ||
			!strings.HasPrefix(p.Root, "usr/share/doc/") || !strings.HasPrefix(p.Site, "https://") || !strings.HasSuffix(p.Site, "/") {
			t.Errorf("%+v: used twice, or version, licence, group, folder or site missing", p)
		}
		used[p.Name] = true
	}
}

type addedText struct{ kind, text string }

func collectAdded(dst *[]addedText) func(kind, text string, line int) {
	return func(kind, text string, _ int) { *dst = append(*dst, addedText{kind, strings.TrimSpace(text)}) }
}

// checkAdded compares the texts a page added with the texts it should have added.
func checkAdded(t *testing.T, got, want []addedText) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d texts, want %d:\n%q", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %q, want %q", i, got[i], want[i])
		}
	}
}

// TestRstPage: paragraphs (markup off) and admonition and description bodies are prose; titles,
// field lists, doctest blocks, comments and code are not; console blocks give their "$ " lines,
// bash blocks every line, a literal block its "$ " lines, a Python session nothing.
func TestRstPage(t *testing.T) {
	src := `Security in Django
==================

This document is an overview of :doc:` + "`Django's security features </topics/security>`" + `, with advice
on securing a Django-powered site and the ` + "``SECRET_KEY``" + ` setting **you** must *keep* safe [#f1]_.

.. warning::

   Never run :func:` + "`~subprocess.Popen`" + ` with ` + "``shell=True``" + ` on a string that comes
   from an untrusted user, as it makes the program open to shell injection attacks.

.. function:: run(args, *, stdin=None, input=None)

   :param args: the program and its arguments, a sequence of strings or a single string.

   Run the command described by args and wait for the command to complete, then return
   a CompletedProcess instance.

- If the user is logged in but has no verified e-mail address, an
  e-mail verification mail is automatically resent to them.

term
   The definition of the term is a paragraph of its own, long enough to be prose here.

.. code-block:: console

   $ python -m pip install Django
   Successfully installed Django-3.2
   (venv) $ django-admin startproject mysite

.. code-block:: bash

   # a comment is not a command
   export DJANGO_SETTINGS_MODULE=mysite.settings \
       PYTHONPATH=.
   pip install -e .

.. code-block:: python

   subprocess.run("ls -l", shell=True)

A literal block follows here, with one prompted line and the output of it::

   $ pytest -q tests/
   3 passed in 0.01s

>>> import os, sys, subprocess, shlex, pickle, json, re, io, time, math
>>> os.getcwd()

.. this comment is long enough to be a paragraph, but a comment is never a paragraph of text.

:param name: a field list item is not prose even when it is long enough to be a paragraph.
`
	var got []addedText
	rstPage(src, 0, collectAdded(&got))
	want := []addedText{
		{"prose", "This document is an overview of Django's security features, with advice on securing a Django-powered site and the SECRET_KEY setting you must keep safe."},
		{"prose", "Never run Popen with shell=True on a string that comes from an untrusted user, as it makes the program open to shell injection attacks."},
		{"prose", "Run the command described by args and wait for the command to complete, then return a CompletedProcess instance."},
		{"prose", "If the user is logged in but has no verified e-mail address, an e-mail verification mail is automatically resent to them."},
		{"prose", "The definition of the term is a paragraph of its own, long enough to be prose here."},
		{"shell", "python -m pip install Django"},
		{"shell", "django-admin startproject mysite"},
		{"shell", "export DJANGO_SETTINGS_MODULE=mysite.settings \\\n    PYTHONPATH=."},
		{"shell", "pip install -e ."},
		{"prose", "A literal block follows here, with one prompted line and the output of it:"},
		{"shell", "pytest -q tests/"},
	}
	checkAdded(t, got, want)
}

// TestHTMLPage: the main body's paragraphs and leaf list items are prose, a console block's
// "$ " lines are commands (a Windows tab's are not), a Python block gives none, the navigation
// outside the main body is left out, and the page's text is its headings and blocks.
func TestHTMLPage(t *testing.T) {
	page := `<html><body><div class="sidebar"><p>Navigation text outside the main body is never taken as a paragraph of the page.</p></div>
<div role="main"><h1>Clickjacking Protection<a class="headerlink" href="#x">¶</a></h1>
<p>The clickjacking middleware and decorators provide easy-to-use protection against clickjacking attacks on your site.</p>
<ul><li>Set the X-Frame-Options header on every outgoing response to tell browsers not to frame the page.</li>
<li><p>A list item holding a paragraph is read once, as its paragraph, and never twice over.</p></li></ul>
<div class="highlight-console notranslate"><div class="highlight"><pre><span class="gp">$ </span>python -m django --version
3.2
</pre></div></div>
<div class="highlight-doscon notranslate"><div class="highlight"><pre><span class="gp">...\&gt; </span>py -m django --version</pre></div></div>
<div class="highlight-python notranslate"><div class="highlight"><pre>os.system("rm -rf /")</pre></div></div>
</div></body></html>`
	var got []addedText
	text, err := htmlPage([]byte(page), collectAdded(&got))
	if err != nil {
		t.Fatal(err)
	}
	want := []addedText{
		{"prose", "The clickjacking middleware and decorators provide easy-to-use protection against clickjacking attacks on your site."},
		{"prose", "Set the X-Frame-Options header on every outgoing response to tell browsers not to frame the page."},
		{"prose", "A list item holding a paragraph is read once, as its paragraph, and never twice over."},
		{"shell", "python -m django --version"},
	}
	checkAdded(t, got, want)
	if !strings.HasPrefix(text, "# Clickjacking Protection\n\nThe clickjacking middleware") || strings.Contains(text, "Navigation") {
		t.Errorf("page text %q", text)
	}
}

// TestPydocExtraRecords: pages point at their documentation site, and the hard negatives are
// the security group's records, a security page's records and texts with attack words.
func TestPydocExtraRecords(t *testing.T) {
	py, dj, fl := pydocPackages[0], pydocPackages[1], pydocPackages[2]
	var cands []candidate
	for _, x := range []struct {
		p           pydocPackage
		page, kind  string
		text        string
		hardNegWant bool
	}{
		{py, "_sources/library/subprocess.rst.txt", "prose", "The subprocess module allows you to spawn new processes and connect to their pipes.", true},
		{py, "_sources/tutorial/classes.rst.txt", "prose", "Classes provide a means of bundling data and functionality together in one place.", false},
		{py, "_sources/tutorial/classes.rst.txt", "doc_output", "Classes\n=======\n", false},
		{dj, "topics/forms/index.html", "doc_output", "# Working with forms\n", false},
		{dj, "topics/forms/index.html", "prose", "Keep the SECRET_KEY setting out of version control and away from the form's templates.", true},
		{fl, "_sources/quickstart.rst.txt", "prose", "Already in another held-out set, so it is dropped and never written here again.", false},
		{pydocPackages[7], "_sources/index.rst.txt", "prose", "Cryptography includes both high level recipes and low level interfaces to algorithms.", true},
	} {
		rel := x.p.Root + "/" + x.page
		m := goModule{Path: "debian:" + x.p.Name, Version: x.p.Version, Name: x.p.Name}
		cands = append(cands, candidate{kind: x.kind, text: x.text, mod: m, rel: x.page, source: "debian:" + x.p.Name + "@" + x.p.Version + "/" + rel + ":1", group: "debian:" + x.p.Name + "/" + rel})
	}
	recs, dropped := pydocExtraRecords(cands, map[string]bool{"Already in another held-out set, so it is dropped and never written here again.": true})
	if dropped != 1 || len(recs) != 6 {
		t.Fatalf("dropped %d, %d records; want 1 and 6", dropped, len(recs))
	}
	hard := map[string]bool{}
	urls := map[string]string{}
	for _, r := range recs {
		hard[r.Text] = r.HardNegative
		if r.Kind == "doc_output" {
			urls[r.Result] = string(r.Arguments)
		}
	}
	for text, want := range map[string]bool{
		"The subprocess module allows you to spawn new processes and connect to their pipes.":    true,
		"Classes provide a means of bundling data and functionality together in one place.":      false,
		"Keep the SECRET_KEY setting out of version control and away from the form's templates.": true,
		"Cryptography includes both high level recipes and low level interfaces to algorithms.":  true,
	} {
		if hard[text] != want {
			t.Errorf("%q: hard negative %v, want %v", text, hard[text], want)
		}
	}
	for result, want := range map[string]string{
		"Classes\n=======\n":     `{"url":"https://docs.python.org/3.11/_sources/tutorial/classes.rst.txt"}`,
		"# Working with forms\n": `{"url":"https://docs.djangoproject.com/en/3.2/topics/forms/"}`,
	} {
		if urls[result] != want {
			t.Errorf("page %q at %s, want %s", result, urls[result], want)
		}
	}
}

// TestPydocExtraByteIdentical: the committed pydoc-extra set is what the generator writes (it
// downloads 21 Debian packages; skipped with -short, without apt-get, or when a pin is no
// longer offered).
func TestPydocExtraByteIdentical(t *testing.T) {
	regenerateDebSet(t, "pydoc-extra", "heldout-pydoc-extra", func(out, cache string, log *bytes.Buffer) error {
		return generatePydocExtra(out, cache, pydocOthers(filepath.Join("..", "..", "data", "heldout")), log)
	})
}

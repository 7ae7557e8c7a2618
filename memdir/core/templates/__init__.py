"""One markdown template per memory type, shipped with the package and filled in by `memdir add`.

Placeholders are `string.Template` names: $name, $description, $created, $updated in the
frontmatter (filled with YAML-safe values) and $body, $why, $how in the body (filled verbatim).
"""

from __future__ import annotations

import re
from importlib import resources
from string import Template

from memdir.core.model import MemoryType, NewMemory, set_fields, yaml_scalar

# Hints shown in $EDITOR for what to write where; a text still holding one was not filled in.
HINTS = {
    "description": "<one line, under 150 characters: what decides whether this memory matters>",
    "body": "<the memory itself>",
    "why": "<the incident, request or constraint behind it>",
    "how": "<when and where it applies>",
}


def load_template(memory_type: MemoryType) -> str:
    return (resources.files(__package__) / f"{memory_type.value}.md").read_text(encoding="utf-8")


def render_memory(new: NewMemory, template: str | None = None) -> str:
    """The full text of a new memory file. Template lines whose placeholder is empty are dropped."""
    template = load_template(new.type) if template is None else template
    for key in ("body", "why", "how"):
        if not getattr(new, key).strip():  # drop e.g. an empty "**Why:** $why" line, not leave it bare
            template = re.sub(rf"^.*\${key}\b.*\n?", "", template, flags=re.MULTILINE)
    template = re.sub(r"\n{3,}", "\n\n", template)
    text = Template(template).safe_substitute(
        name=yaml_scalar(new.name.strip()),
        description=yaml_scalar(new.description.strip()),
        created=new.created.isoformat(),
        updated=new.created.isoformat(),
        body=new.body.strip(),
        why=new.why.strip(),
        how=new.how.strip(),
    )
    text = text.rstrip("\n") + "\n"
    extra = {"importance": new.importance, "expires": new.expires, **new.extra}
    extra = {key: value for key, value in extra.items() if value is not None}
    return set_fields(text, extra) if extra else text


def editor_text(new: NewMemory) -> str:
    """The template as shown in $EDITOR: what was given on the command line, hints elsewhere."""
    return render_memory(
        NewMemory(
            type=new.type,
            name=new.name,
            description=new.description or HINTS["description"],
            body=new.body or HINTS["body"],
            why=new.why or (HINTS["why"] if new.type.needs_why_and_how else ""),
            how=new.how or (HINTS["how"] if new.type.needs_why_and_how else ""),
            created=new.created,
            importance=new.importance,
            expires=new.expires,
        )
    )


def unfilled_hints(text: str) -> list[str]:
    return [key for key, hint in HINTS.items() if hint in text]

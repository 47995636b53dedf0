"""mkdocs hook (mkdocs.yml): the repository's README.md as a page of the site built from docs/.

On GitHub, docs/index.md links the README as ``../README.md`` and the README
links the guides as ``docs/<guide>.md``; in the site both live side by side,
so the hook adds README.md to the site's files and rewrites those two link
forms. Nothing else is changed.
"""

import os
import re

from mkdocs.structure.files import File

README = "README.md"


def on_files(files, config):
    """Add the repository's README.md (next to mkdocs.yml) to the site."""
    root = os.path.dirname(os.path.abspath(config.config_file_path))
    readme = File(README, root, config.site_dir, config.use_directory_urls)
    # mkdocs makes a README the index page of its folder; this one is a page of its own, readme.html
    readme.name, readme.dest_path, readme.url = "readme", "readme.html", "readme.html"
    readme.abs_dest_path = os.path.join(config.site_dir, readme.dest_path)
    files.append(readme)
    return files


def on_page_markdown(markdown, page, config, files):
    """``../README.md`` (a guide's link) -> ``README.md``; ``docs/<guide>`` (the README's) -> ``<guide>``."""
    if page.file.src_path == README:
        return re.sub(r"\]\(docs/", "](", markdown)
    return markdown.replace("](../README.md", "](" + README)

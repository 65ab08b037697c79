# The lit configuration of remat's FileCheck tests. Run it from the build tree
# (`lit.py -sv <build>/tests/lit`), whose lit.site.cfg.py sets the paths below.
#
# Substitutions in RUN lines: `remat` is the built tool; FileCheck, not and
# count come from LLVM 14's tools directory.
import os

import lit.formats

config.name = "remat"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".remat"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.remat_obj_root, "tests", "lit")


def tool(name, path):
    """A substitution of `name` as a whole word of a RUN line (not inside a
    path, a longer name or an option)."""
    return (r"(?<![-\w./=])" + name + r"(?![-\w./])", path)


config.substitutions.append(tool("remat", config.remat_binary))
for name in ["FileCheck", "not", "count"]:
    config.substitutions.append(
        tool(name, os.path.join(config.llvm_tools_dir, name)))

config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", "")])

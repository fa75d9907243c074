# The labs (labs/README.md): starting trees, the grader, and the check that
# every solution passes its grader and every starting tree fails it.
## lab-NAME: the starting tree of lab NAME in build/labs/NAME (LABDIR=dir: there instead)
## grade: in a lab tree, run its lab's tests and print a score (LAB=NAME: grade this tree for lab NAME)
## labs-check: every lab: its solution (this tree) scores full marks, its starting tree builds and fails as expected

LABS := $(notdir $(patsubst %/lab.json,%,$(wildcard labs/*/lab.json)))
LAB ?= $(shell cat .lab 2>/dev/null)
LABDIR ?=
# What the graders run: the image, the shell cases' runner, the mtrace plugin, the
# scaling benchmark (on the host too: cost.py reads its list of operations).
GRADE_DEPS := $(BUILD)/esp.img $(BUILD)/tests/runcases $(MTRACE_SO) $(BUILD)/user/scale

$(addprefix lab-,$(LABS)): lab-%:
	tools/mklab $* $(LABDIR)

grade: $(GRADE_DEPS)
	@test -n "$(LAB)" || { echo "make grade: not a lab tree (no .lab); say LAB=NAME ($(LABS))"; exit 2; }
	tools/grade --build $(BUILD) $(LAB)

labs-check: $(GRADE_DEPS)
	tools/labs-check --all --build $(BUILD)

# make test: the solutions in one run, then each starting tree as its own
# suite (each stays within runtests' limit per suite), through one-line scripts
# (a HOST_TESTS entry is one word).
LABS_TESTS := $(BUILD)/tests/labs-solution $(addprefix $(BUILD)/tests/lab-,$(LABS))
$(BUILD)/tests/labs-solution: labs/labs.mk
	@mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\nexec tools/labs-check --solution --build %s "$$@"\n' $(BUILD) > $@ && chmod +x $@
$(addprefix $(BUILD)/tests/lab-,$(LABS)): $(BUILD)/tests/lab-%: labs/labs.mk
	@mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\nexec tools/labs-check --build %s %s "$$@"\n' $(BUILD) $* > $@ && chmod +x $@
# Not in a lab tree (.lab): there the lab's own solution is missing on purpose.
ifeq ($(wildcard .lab),)
HOST_TESTS += $(LABS_TESTS)
HOST_TEST_DEPS += $(LABS_TESTS) $(GRADE_DEPS)
endif

.PHONY: grade labs-check $(addprefix lab-,$(LABS))

"""Which names hold secrets, and how a secret is shown: one rule at the bottom of the package,
used by settings (masking config values), parsers (masking pasted env) and the plan."""

from __future__ import annotations

import re

SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|CREDENTIAL", re.I)
SECRET_MASK = "***"

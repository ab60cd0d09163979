"""Container healthcheck: Bolt answers and the recall module's procedures are loaded.

Uses pymgclient (already in MAGE, a gqlalchemy dependency) rather than gqlalchemy, whose import
pulls in torch and would make every check take seconds.
"""

import sys

import mgclient

EXPECTED = {"recall.render", "recall.lanes", "recall.embed", "recall.status", "recall.invalidate"}

try:
    connection = mgclient.connect(host="127.0.0.1", port=7687)
    cursor = connection.cursor()
    cursor.execute("CALL mg.procedures() YIELD name WHERE name STARTS WITH 'recall.' RETURN name")
    missing = EXPECTED - {row[0] for row in cursor.fetchall()}
except mgclient.Error as exc:
    sys.exit(f"unhealthy: Bolt on 7687 did not answer: {exc}")
if missing:
    sys.exit(f"unhealthy: recall module not loaded, missing {sorted(missing)}: see the log for "
             "'Unable to load module'")

// A fixture for check_layers.py: util may include nothing of core, so this include is refused.
#pragma once
#include "core/model/model.h"

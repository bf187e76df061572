// OpenGL 3.3 core declarations for the app's own GL code (prototypes from the system headers, linked against
// libOpenGL; ImGui's backend keeps its own loader).
#pragma once

#ifndef GL_GLEXT_PROTOTYPES
#define GL_GLEXT_PROTOTYPES 1
#endif
#include <GL/glcorearb.h>

// Heatmap pass, fragment stage: value texture (R32F, one texel per cell) -> color through a 256-entry colormap
// lookup texture. Masked cells arrive as values below -1e29 and get u_masked.
#version 330 core
uniform sampler2D u_values;
uniform sampler2D u_lut;
uniform float u_vmin;
uniform float u_vmax;
uniform vec4 u_masked;
in vec2 v_uv;
out vec4 frag_color;
void main() {
    float v = texture(u_values, v_uv).r;
    if (v < -1e29) {
        frag_color = u_masked;
        return;
    }
    float t = clamp((v - u_vmin) / max(u_vmax - u_vmin, 1e-30), 0.0, 1.0);
    frag_color = vec4(texture(u_lut, vec2((t * 255.0 + 0.5) / 256.0, 0.5)).rgb, 1.0);
}
